#pragma once
// Backends: where tensors live and ops run. The CPU backend is the first; a GPU backend
// implements the same interface in its own folder (src/backend/<name>/).
//
// Persistent tensors (the KV cache) live in a Buffer allocated from a backend and outlive
// any graph:
//
//     auto cpu = pocket::make_cpu_backend({.n_threads = 8});
//     pocket::Tensor k_cache = pocket::make_tensor(GgmlType::F16, {n_embd_k, n_ctx});
//     pocket::Tensor v_cache = pocket::make_tensor(GgmlType::F16, {n_embd_v, n_ctx});
//     auto kv = cpu->alloc_buffer(k_cache.nbytes() + v_cache.nbytes() + 2 * Buffer::kAlign);
//     kv->place(k_cache);  kv->place(v_cache);  kv->clear(0);
//
// Graphs are run through a Scheduler (pocket/scheduler.hpp), with one backend or several.
#include "pocket/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace pocket {

class Backend;

// A block of memory owned by a backend (host memory for the CPU backend, device memory for
// a GPU backend). Tensors are placed in it by offset.
class Buffer {
public:
    static constexpr size_t kAlign = 64;

    Buffer(Backend& backend, void* data, size_t size) : backend_(backend), data_(data), size_(size) {}
    virtual ~Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    Backend& backend() const { return backend_; }
    void* data() const { return data_; }
    size_t size() const { return size_; }

    // Places `t` at the next kAlign-aligned free offset (a bump allocator): sets t.data and
    // t.buffer. Throws pocket::Error when it does not fit. Returns the offset.
    size_t place(Tensor& t);
    // Places `t` at a given offset (must be aligned to the type and fit).
    void place_at(Tensor& t, size_t offset);
    // Sets every byte of the buffer.
    void clear(uint8_t value);

private:
    Backend& backend_;
    void* data_;
    size_t size_;
    size_t used_ = 0;
};

// The interface every backend implements. The Scheduler is its only caller for graphs;
// tensor_set / tensor_get reach set_tensor / get_tensor through a tensor's buffer.
class Backend {
public:
    virtual ~Backend() = default;

    virtual std::string_view name() const = 0;
    // True when its buffers are ordinary host memory the CPU may read and write directly
    // (then ->data of its tensors can be used as a pointer by the caller).
    virtual bool is_host() const = 0;
    // Can this backend read `t`'s memory where it is (e.g. a weight in the mmapped file)?
    virtual bool can_access(const Tensor& t) const = 0;

    // Memory, aligned to Buffer::kAlign. Never returns null (throws pocket::Error).
    virtual std::unique_ptr<Buffer> alloc_buffer(size_t bytes) = 0;

    // Can this backend run `node` with these operand types and shapes?
    virtual bool supports_op(const Tensor& node) const = 0;

    // Called when a graph is (re)allocated, with the nodes this backend will run: sizes its
    // scratch memory so that compute allocates nothing.
    virtual void reserve(std::span<Tensor* const> nodes) = 0;
    // Runs the nodes in order; every operand's memory is set and readable by this backend.
    // View nodes (op_is_view) are in the list too and need no work.
    virtual void compute(std::span<Tensor* const> nodes) = 0;

    // Byte copies into / out of a tensor's memory on this backend.
    virtual void set_tensor(Tensor& t, const void* src, size_t offset, size_t size) = 0;
    virtual void get_tensor(const Tensor& t, void* dst, size_t offset, size_t size) = 0;
    // Sets `size` bytes of a buffer's memory at `ptr` (poisoning freed memory, clearing).
    virtual void memset(void* ptr, uint8_t value, size_t size) = 0;
    // dst (on this backend, contiguous) = src (contiguous, same type and size, on `from`).
    virtual void copy_from(Backend& from, const Tensor& src, Tensor& dst) = 0;
};

struct CpuBackendOptions {
    int n_threads = 1;   // -t: size of the persistent thread pool (this thread included)
    // Ops with fewer multiply-adds than this run on one thread, saving a barrier that would
    // cost more than their work (0: split every op; tests use it). Results do not change.
    int64_t min_parallel_cost = 64 * 1024;
};

// The CPU backend: a thread pool created once (n_threads - 1 workers plus the caller), ops
// split by rows so each output element is computed by one thread in a fixed order: results
// are bitwise identical for any n_threads.
std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

}  // namespace pocket
