#pragma once
// Internal: a small pool of std::threads that splits a range of rows into chunks. The
// quantizers work row by row, so the result never depends on how rows are split.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pocket::quantize {

class RowPool {
public:
    // fn(first_row, n_rows, worker): worker < n_threads, for per-thread scratch buffers.
    using ChunkFn = std::function<void(int64_t, int64_t, int)>;

    explicit RowPool(int n_threads);
    ~RowPool();
    RowPool(const RowPool&) = delete;
    RowPool& operator=(const RowPool&) = delete;

    int n_threads() const { return n_threads_; }
    // Runs fn over rows [0, n_rows) in chunks of rows_per_chunk on every thread (the caller's
    // included) and returns when all are done. The first exception thrown is rethrown here.
    void run(int64_t n_rows, int64_t rows_per_chunk, const ChunkFn& fn);

private:
    void work(int worker);
    void worker_loop(int worker);

    int n_threads_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable start_, done_;
    uint64_t generation_ = 0;
    int busy_ = 0;
    bool stop_ = false;
    // The job in progress.
    const ChunkFn* fn_ = nullptr;
    int64_t n_rows_ = 0, chunk_ = 1, next_row_ = 0;
    std::exception_ptr error_;
};

}  // namespace pocket::quantize
