#pragma once
// Backends: where tensors live and ops run. A Device (pocket/device.hpp) is a place with
// memory (the CPU, a GPU); a Backend runs graph nodes on one device; a Buffer is a block of
// one device's memory. The CPU backend is the first; a GPU backend implements the same
// interfaces in its own folder (src/backend/<name>/) and registers its devices.
//
// Persistent tensors (the KV cache) live in a Buffer allocated from a device and outlive
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
class Device;

// A block of memory of one device. Tensors are placed in it by offset; their `data` is then
// an address in the device's address space, which only the device's backend and this
// buffer's read / write / fill may dereference (on the CPU it is an ordinary pointer).
class Buffer {
public:
    static constexpr size_t kAlign = 64;
    // `bytes` rounded up to kAlign: what one tensor takes in a buffer that holds several.
    static constexpr size_t aligned_size(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

    Buffer(Device& device, void* data, size_t size) : device_(device), data_(data), size_(size) {}
    virtual ~Buffer() = default;
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    Device& device() const { return device_; }
    void* data() const { return data_; }
    size_t size() const { return size_; }

    // Byte copies between host memory and this buffer; `at` is an address inside it (a
    // tensor's data plus an offset). The defaults are memcpy / memset, right for host memory.
    virtual void write(void* at, const void* src, size_t size);
    virtual void read(const void* at, void* dst, size_t size) const;
    virtual void fill(void* at, uint8_t value, size_t size);
    // False when its bytes are in a backend's own layout rather than ggml's (the CPU's
    // row-interleaved weights): then only that backend's kernels read them, and nothing
    // copies them elsewhere.
    virtual bool plain_layout() const { return true; }

    // Places `t` at the next kAlign-aligned free offset (a bump allocator): sets t.data and
    // t.buffer. Throws pocket::Error when it does not fit. Returns the offset.
    size_t place(Tensor& t);
    // Places `t` at a given offset (must be aligned to the type and fit).
    void place_at(Tensor& t, size_t offset);
    // Sets every byte of the buffer.
    void clear(uint8_t value) { fill(data_, value, size_); }

private:
    Device& device_;
    void* data_;
    size_t size_;
    size_t used_ = 0;
};

// Copies src's bytes into dst (same byte size, both contiguous), wherever each lives: host
// memory, or a buffer of any device (through host memory when neither side is the host).
void copy_tensor(const Tensor& src, Tensor& dst);

// Runs graph nodes on one device. The Scheduler is its only caller for graphs.
class Backend {
public:
    virtual ~Backend() = default;

    virtual Device& device() const = 0;
    std::string_view name() const;
    // True when its memory is host memory the CPU reads and writes directly.
    bool is_host() const;
    // Can this backend read `t`'s memory where it is (e.g. a weight in the mmapped file)?
    virtual bool can_access(const Tensor& t) const = 0;

    // Memory of this backend's device, aligned to Buffer::kAlign (throws pocket::Error).
    std::unique_ptr<Buffer> alloc_buffer(size_t bytes);

    // Can this backend run `node` with these operand types, shapes and layouts?
    virtual bool supports_op(const Tensor& node) const = 0;

    // Called when a graph is (re)allocated, with the nodes this backend will run: sizes its
    // scratch memory so that compute allocates nothing.
    virtual void reserve(std::span<Tensor* const> nodes) = 0;
    // Runs the nodes in order; every operand's memory is set and readable by this backend.
    // View nodes (op_is_view) are in the list too and need no work.
    virtual void compute(std::span<Tensor* const> nodes) = 0;
    // Threads for the next computes, at most those it was made with (the CPU's -t for one
    // token, -tb for a batch); a backend without threads ignores it.
    virtual void set_threads(int /*n_threads*/) {}
};

struct CpuBackendOptions {
    int n_threads = 1;   // -t: size of the persistent thread pool (this thread included)
    // Ops with fewer multiply-adds than this run on one thread, saving a barrier that would
    // cost more than their work (0: split every op; tests use it). Results do not change.
    int64_t min_parallel_cost = 64 * 1024;
    // Run with fewer threads while other processes hold cores, i.e. while the barriers keep
    // waiting for a descheduled thread (tests of the split across threads turn it off).
    // Results do not change.
    bool adapt_threads = true;
};

// The CPU backend: a thread pool created once (n_threads - 1 workers plus the caller), ops
// split by rows so each output element is computed by one thread in a fixed order: results
// are bitwise identical for any n_threads.
std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options = {});

}  // namespace pocket
