#include "row_pool.hpp"

#include <algorithm>

namespace pocket::quantize {

RowPool::RowPool(int n_threads) : n_threads_(std::max(1, n_threads)) {
    for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker_loop(i); });
}

RowPool::~RowPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
}

// Takes chunks until none is left; after an error the others stop taking new ones.
void RowPool::work(int worker) {
    for (;;) {
        int64_t first;
        {
            std::lock_guard lock(mutex_);
            if (error_ || next_row_ >= n_rows_) return;
            first = next_row_;
            next_row_ += chunk_;
        }
        try {
            (*fn_)(first, std::min(chunk_, n_rows_ - first), worker);
        } catch (...) {
            std::lock_guard lock(mutex_);
            if (!error_) error_ = std::current_exception();
            return;
        }
    }
}

void RowPool::worker_loop(int worker) {
    uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            start_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
        }
        work(worker);
        {
            std::lock_guard lock(mutex_);
            --busy_;
        }
        done_.notify_one();
    }
}

void RowPool::run(int64_t n_rows, int64_t rows_per_chunk, const ChunkFn& fn) {
    {
        std::lock_guard lock(mutex_);
        fn_ = &fn;
        n_rows_ = n_rows;
        chunk_ = std::max<int64_t>(1, rows_per_chunk);
        next_row_ = 0;
        error_ = nullptr;
        busy_ = static_cast<int>(threads_.size());
        ++generation_;
    }
    start_.notify_all();
    work(0);
    std::exception_ptr error;
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return busy_ == 0; });
        error = error_;
        fn_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace pocket::quantize
