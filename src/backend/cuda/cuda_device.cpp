// CUDA devices: discovery, memory, buffers.
#include "backend/cuda/cuda_device.hpp"

#include "pocket/error.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

namespace pocket::cuda {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

}  // namespace

void check(cudaError_t r, std::string_view device, std::string_view what) {
    if (r == cudaSuccess) return;
    cudaGetLastError();   // clear a sticky-less error so that the next call starts clean
    throw Error("{}: {} failed: {}", device, what, cudaGetErrorString(r));
}

CudaDevice::CudaDevice(int ordinal, std::string name, std::string description)
    : ordinal_(ordinal), name_(std::move(name)), description_(std::move(description)) {}

void CudaDevice::use() const { check(cudaSetDevice(ordinal_), name_, "cudaSetDevice"); }

DeviceMemory CudaDevice::memory() const {
    use();
    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), name_, "cudaMemGetInfo");
    return {free, total};
}

std::unique_ptr<Buffer> CudaDevice::alloc_buffer(size_t bytes) {
    use();
    const size_t size = Buffer::aligned_size(std::max<size_t>(bytes, 1));
    void* p = nullptr;
    if (cudaError_t r = cudaMalloc(&p, size); r != cudaSuccess) {
        cudaGetLastError();
        if (r == cudaErrorMemoryAllocation) {
            const DeviceMemory m = memory();
            throw Error("{}: out of device memory: {:.1f} MiB asked, {:.1f} MiB free of {:.1f} MiB", name_, size / kMiB, m.free / kMiB,
                        m.total / kMiB);
        }
        check(r, name_, fmt::format("cudaMalloc of {} bytes", size));
    }
    return std::make_unique<CudaBuffer>(*this, p, size);
}

std::unique_ptr<Backend> CudaDevice::make_backend(int) { return cuda::make_backend(*this); }

CudaBuffer::~CudaBuffer() {
    device_.use_quietly();
    cudaFree(data());
}

void CudaBuffer::check_range(const void* at, size_t size) const {
    const auto a = reinterpret_cast<uintptr_t>(at), base = reinterpret_cast<uintptr_t>(data());
    if (a < base || a + size > base + this->size()) throw Error("{}: access of {} bytes outside its buffer", device().name(), size);
}

void CudaBuffer::write(void* at, const void* src, size_t size) {
    check_range(at, size);
    if (size == 0) return;
    std::lock_guard lock(device_.mutex());
    device_.use();
    check(cudaMemcpy(at, src, size, cudaMemcpyHostToDevice), device().name(), "copy to the device");
}

void CudaBuffer::read(const void* at, void* dst, size_t size) const {
    check_range(at, size);
    if (size == 0) return;
    std::lock_guard lock(device_.mutex());
    device_.use();
    check(cudaMemcpy(dst, at, size, cudaMemcpyDeviceToHost), device().name(), "copy from the device");
}

void CudaBuffer::fill(void* at, uint8_t value, size_t size) {
    check_range(at, size);
    if (size == 0) return;
    std::lock_guard lock(device_.mutex());
    device_.use();
    check(cudaMemset(at, value, size), device().name(), "cudaMemset");
    // cudaMemset is asynchronous for device memory: finish it before anyone reads.
    check(cudaDeviceSynchronize(), device().name(), "cudaMemset");
}

std::vector<std::unique_ptr<Device>> find_devices(std::string& problem) {
    std::vector<std::unique_ptr<Device>> out;
    if (const char* v = std::getenv("POCKET_CUDA"); v && std::string_view(v) == "0") {
        problem = "CUDA: turned off by POCKET_CUDA=0";
        return out;
    }
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver == 0) {
        problem = "CUDA: no NVIDIA driver";
        return out;
    }
    // CUDA's minor-version compatibility: any driver of the runtime's major version will do.
    if (driver / 1000 < CUDART_VERSION / 1000) {
        problem = fmt::format("CUDA: the NVIDIA driver supports CUDA {}, this build of pocket needs {} or newer", version_text(driver),
                              version_text(CUDART_VERSION));
        return out;
    }
    int n = 0;
    if (cudaError_t r = cudaGetDeviceCount(&n); r != cudaSuccess) {
        cudaGetLastError();
        problem = fmt::format("CUDA: {}", cudaGetErrorString(r));
        return out;
    }
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        if (prop.major * 10 + prop.minor < POCKET_CUDA_MIN_ARCH) {
            problem = fmt::format("CUDA: {} (compute {}.{}) not used: this build has code for compute {}.{} and newer (POCKET_CUDA_ARCHS)",
                                  prop.name, prop.major, prop.minor, POCKET_CUDA_MIN_ARCH / 10, POCKET_CUDA_MIN_ARCH % 10);
            continue;
        }
        out.push_back(std::make_unique<CudaDevice>(i, fmt::format("CUDA{}", out.size()),
                                                   fmt::format("{} (compute {}.{})", prop.name, prop.major, prop.minor)));
    }
    if (out.empty() && problem.empty()) problem = "CUDA: no device";
    return out;
}

}  // namespace pocket::cuda
