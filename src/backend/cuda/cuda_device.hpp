#pragma once
// Internal: the CUDA devices (one per NVIDIA GPU the runtime finds) and their backend.
#include "backend/cuda/cuda_registry.hpp"
#include "pocket/device.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace pocket::cuda {

// Throws pocket::Error "<device>: <what>: <CUDA's message>" unless `r` is cudaSuccess.
void check(cudaError_t r, std::string_view device, std::string_view what);

class CudaDevice final : public Device {
public:
    CudaDevice(int ordinal, std::string name, std::string description);

    std::string_view name() const override { return name_; }
    std::string description() const override { return description_; }
    DeviceMemory memory() const override;
    bool is_host() const override { return false; }
    bool holds_weight_type(GgmlType t) const override;
    std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override;
    std::unique_ptr<Backend> make_backend(int n_threads) override;

    int ordinal() const { return ordinal_; }
    // Makes this device current for the calling thread (CUDA's current device is per thread).
    void use() const;
    // The same for destructors: never throws (after a sticky error nothing else can be done).
    void use_quietly() const noexcept { cudaSetDevice(ordinal_); }
    // Held while a run is captured into a graph and around byte copies: a copy on the legacy
    // stream from another thread during a capture would break the capture and fail itself.
    std::mutex& mutex() const { return mutex_; }

private:
    int ordinal_;
    std::string name_, description_;
    mutable std::mutex mutex_;
};

// A block of the device's memory (cudaMalloc): data() is a device address, read and written
// through cudaMemcpy on the legacy default stream, which waits for the backend's work first.
class CudaBuffer final : public Buffer {
public:
    CudaBuffer(CudaDevice& device, void* data, size_t size) : Buffer(device, data, size), device_(device) {}
    ~CudaBuffer() override;

    void write(void* at, const void* src, size_t size) override;
    void read(const void* at, void* dst, size_t size) const override;
    void fill(void* at, uint8_t value, size_t size) override;

private:
    void check_range(const void* at, size_t size) const;
    CudaDevice& device_;
};

// The backend: runs a graph's nodes as kernel launches on its own stream, captured into a
// CUDA graph once the same nodes come back with the same memory, then replayed.
std::unique_ptr<Backend> make_backend(CudaDevice& device);

// Can the CUDA backend run `node`? (Types and shapes; see cuda_supports.cpp.)
bool supports(const Tensor& node);

}  // namespace pocket::cuda
