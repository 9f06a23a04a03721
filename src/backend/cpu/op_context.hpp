#pragma once
// What every CPU op implementation receives: its thread index among nth, the pool's barrier,
// and the shared scratch memory sized at plan time (Backend::reserve).
#include "backend/cpu/thread_pool.hpp"
#include "pocket/tensor.hpp"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace pocket::cpu {

// First error raised by any thread during a compute; rethrown by the caller afterwards
// (an exception must not cross a worker thread).
struct ErrorSlot {
    std::mutex mutex;
    std::string message;
    void set(std::string m) {
        std::lock_guard lock(mutex);
        if (message.empty()) message = std::move(m);
    }
};

inline constexpr size_t kScratchAlign = 64;
inline size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

struct OpContext {
    int ith = 0;
    int nth = 1;
    ThreadPool* pool = nullptr;
    uint8_t* work = nullptr;
    size_t work_size = 0;
    ErrorSlot* errors = nullptr;

    void barrier() const {
        if (pool) pool->barrier();
    }
    // This thread's contiguous share [first, last) of n items: fixed by (n, ith, nth) alone.
    std::pair<int64_t, int64_t> range(int64_t n) const {
        return {n * ith / nth, n * (ith + 1) / nth};
    }
    // Calls f(first, last) for chunks of n items (`chunk` each at most) until none is left: this
    // thread's range(n) from its front, in order, then what is left of the other threads' ranges
    // from their backs (ThreadPool::take), so that a thread on a core slowed by a neighbour does
    // less. Which thread does a chunk varies from run to run, so a chunk's results must not
    // depend on the thread. At most one such loop between barriers; fewer than 2^31 items.
    template <class F> void for_each_chunk_shared(int64_t n, int64_t chunk, F&& f) const {
        if (!pool || nth == 1) {
            if (n > 0) f(int64_t{0}, n);
            return;
        }
        assert(chunk >= 1 && n < (int64_t{1} << 31));
        for (int k = 0; k < nth; ++k) {
            const int owner = (ith + k) % nth;  // this thread's own share first
            const int64_t first = n * owner / nth, size = n * (owner + 1) / nth - first;
            for (;;) {
                const auto [offset, count] = pool->take(owner, size, chunk, owner == ith);
                if (count == 0) break;
                f(first + offset, first + offset + count);
            }
        }
    }
    // This thread's slice of a per-thread scratch area of `bytes` bytes per thread.
    template <class T> T* thread_scratch(size_t bytes, size_t base_offset = 0) const {
        return reinterpret_cast<T*>(work + base_offset + static_cast<size_t>(ith) * round_up(bytes, kScratchAlign));
    }
    void fail(std::string message) const {
        if (errors) errors->set(std::move(message));
    }
};

// Work memory for a per-thread scratch of `bytes` bytes per thread.
inline size_t per_thread_bytes(size_t bytes, int nth) { return round_up(bytes, kScratchAlign) * static_cast<size_t>(nth); }

// Row r of a tensor's rows (dims 1..3) as indices.
struct RowIndex {
    int64_t i1, i2, i3;
};
inline RowIndex row_index(const Tensor& t, int64_t r) {
    return {r % t.ne[1], (r / t.ne[1]) % t.ne[2], r / (t.ne[1] * t.ne[2])};
}
inline uint8_t* row_ptr(const Tensor& t, RowIndex ix) {
    return static_cast<uint8_t*>(t.data) + ix.i1 * t.nb[1] + ix.i2 * t.nb[2] + ix.i3 * t.nb[3];
}

}  // namespace pocket::cpu
