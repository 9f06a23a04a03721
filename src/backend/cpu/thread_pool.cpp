// Persistent thread pool with a sense-counting barrier (see thread_pool.hpp).
#include "backend/cpu/thread_pool.hpp"

#include <algorithm>
#include <chrono>

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
inline uint64_t now_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}
}  // namespace

ThreadPool::ThreadPool(int n_threads) : n_threads_(n_threads < 1 ? 1 : n_threads), active_(n_threads_), run_active_(n_threads_) {
    for (auto& t : taken_) t = std::make_unique<Taken[]>(static_cast<size_t>(n_threads_));
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
    if (active_ == 1) {
        if (run_active_ != 1) {
            std::lock_guard lock(mutex_);  // a late worker may read it
            run_active_ = 1;               // the job's barriers are then no-ops
        }
        job(ctx, 0);
        last_run_ = {};
        return;
    }
    // No worker touches the counters before the run is published. The barriers reset only
    // the shares of a run's threads: the others' are reset here, for a run with more threads.
    for (auto& parity : taken_)
        for (int i = run_active_; i < active_; ++i) parity[i].counts.store(0, std::memory_order_relaxed);
    const uint32_t first_phase = phase_.load(std::memory_order_relaxed);
    slept_ns_.store(0, std::memory_order_relaxed);
    const uint64_t start_ns = now_ns();
    {
        // The run and its thread count are published together: a worker that wakes late
        // sees the count of the run whose job it reads, never the next one's.
        std::lock_guard lock(mutex_);
        job_ = job;
        ctx_ = ctx;
        run_active_ = active_;
        ++generation_;
    }
    wake_.notify_all();
    job(ctx, 0);
    // The closing barrier: when it opens, every worker has finished the job.
    barrier();
    // A worker that slept at this last barrier may add its time a moment late (into the
    // next run's): the figures are a hint, never a result.
    last_run_ = {run_active_, phase_.load(std::memory_order_acquire) - first_phase,
                 slept_ns_.load(std::memory_order_relaxed), now_ns() - start_ns};
}

void ThreadPool::worker_main(int ith) {
    uint64_t seen = 0;
    for (;;) {
        Job job;
        void* ctx;
        int active;
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            job = job_;
            ctx = ctx_;
            active = run_active_;
        }
        if (ith >= active) continue;  // not in this run (-t below -tb): no job, no barrier
        job(ctx, ith);
        barrier();
    }
}

std::pair<int64_t, int64_t> ThreadPool::take(int owner, int64_t share_size, int64_t chunk, bool from_front) {
    std::atomic<uint64_t>& counts = taken_[phase_.load(std::memory_order_acquire) & 1][owner].counts;
    uint64_t seen = counts.load(std::memory_order_relaxed);
    for (;;) {
        const auto front = static_cast<int64_t>(seen & 0xffffffffu), back = static_cast<int64_t>(seen >> 32);
        const int64_t left = share_size - front - back;
        if (left <= 0) return {0, 0};
        const int64_t n = std::min(chunk, left);
        const uint64_t next = seen + (from_front ? static_cast<uint64_t>(n) : static_cast<uint64_t>(n) << 32);
        if (counts.compare_exchange_weak(seen, next, std::memory_order_relaxed))
            return {from_front ? front : share_size - back - n, n};
    }
}

void ThreadPool::barrier() {
    if (run_active_ == 1) return;
    const uint32_t phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == run_active_ - 1) {
        arrived_.store(0, std::memory_order_relaxed);
        for (int i = 0; i < run_active_; ++i)  // published by the release below
            taken_[(phase + 1) & 1][i].counts.store(0, std::memory_order_relaxed);
        phase_.fetch_add(1, std::memory_order_release);
        phase_.notify_all();  // cheap when nobody sleeps
        return;
    }
    // Spin a while (ops are short and the others are usually close behind), then sleep on the
    // phase: when the machine has fewer free cores than threads, a spinning or yielding waiter
    // would take the core from the very thread it waits for.
    for (int spins = 0; spins < 4096; ++spins) {
        if (phase_.load(std::memory_order_acquire) != phase) return;
        cpu_relax();
    }
    // Only this slow path is timed: a spin is short by construction.
    const uint64_t sleep_start = now_ns();
    while (phase_.load(std::memory_order_acquire) == phase) phase_.wait(phase, std::memory_order_acquire);
    slept_ns_.fetch_add(now_ns() - sleep_start, std::memory_order_relaxed);
}

}  // namespace pocket::cpu
