// Persistent thread pool with a sense-counting barrier (see thread_pool.hpp).
#include "backend/cpu/thread_pool.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace pocket::cpu {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#endif
}
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads) {
    workers_.reserve(static_cast<size_t>(n_threads_ - 1));
    for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
}

void ThreadPool::run(Job job, void* ctx) {
    if (n_threads_ == 1) {
        job(ctx, 0);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        job_ = job;
        ctx_ = ctx;
        ++generation_;
    }
    wake_.notify_all();
    job(ctx, 0);
    // The closing barrier: when it opens, every worker has finished the job.
    barrier();
}

void ThreadPool::worker_main(int ith) {
    uint64_t seen = 0;
    for (;;) {
        Job job;
        void* ctx;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
            ctx = ctx_;
        }
        job(ctx, ith);
        barrier();
    }
}

void ThreadPool::barrier() {
    if (n_threads_ == 1) return;
    const uint32_t phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == n_threads_ - 1) {
        arrived_.store(0, std::memory_order_relaxed);
        phase_.fetch_add(1, std::memory_order_release);
        return;
    }
    // Spin briefly (ops are short), then yield: the machine may have fewer cores than threads.
    for (int spins = 0; phase_.load(std::memory_order_acquire) == phase; ++spins) {
        if (spins < 256)
            cpu_relax();
        else
            std::this_thread::yield();
    }
}

}  // namespace pocket::cpu
