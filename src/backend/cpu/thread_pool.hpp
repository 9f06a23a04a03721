#pragma once
// A persistent pool of worker threads. run(fn) calls fn(ith) on every thread (the caller is
// thread 0) and returns when all finished; inside fn, barrier() synchronises all threads
// between the ops of a graph. Workers sleep on a condition variable between runs; inside a run
// they spin briefly on the barrier, then sleep on it (futex). No thread is created after
// construction.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace pocket::cpu {

class ThreadPool {
public:
    explicit ThreadPool(int n_threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return n_threads_; }
    // Threads that take part in the next runs (1..size()); the others sleep through them.
    // Called between runs, from the thread that calls run().
    void set_active(int n) { active_ = n < 1 ? 1 : n > n_threads_ ? n_threads_ : n; }
    int active() const { return active_; }

    // Runs job(ctx, ith) on the active threads (ith < active()). Not reentrant: one run at a time.
    using Job = void (*)(void* ctx, int ith);
    void run(Job job, void* ctx);

    // Waits until every thread of the current run reached this point.
    void barrier();

    // Shares with stealing, for one loop per phase (a phase: the time between two barriers of a
    // run). Each thread owns a share of the phase's items (which items: the caller's business)
    // and takes it from the front, a chunk at a time, so that its rows stream in order; a thread
    // done with its own share takes chunks from the back of the others'. So a thread slowed by a
    // neighbour on its core does less. take() returns {offset in the share, count}, count 0 once
    // the share is gone; the barrier that opens a phase resets the run's shares (run() those
    // of threads the last run did not have).
    std::pair<int64_t, int64_t> take(int owner, int64_t share_size, int64_t chunk, bool from_front);

    // How the last run went (see ThreadThrottle): its threads, the barriers it passed (the
    // closing one included), the time its threads slept at them after spinning out (summed
    // over threads), and its wall time.
    struct RunStats {
        int threads = 1;
        uint32_t barriers = 0;
        uint64_t slept_ns = 0;
        uint64_t wall_ns = 0;
    };
    RunStats last_run() const { return last_run_; }

private:
    void worker_main(int ith);

    int n_threads_;
    int active_;                // the caller's setting, for the next runs
    int run_active_;            // the current run's, published with it under mutex_
    std::vector<std::thread> workers_;

    std::mutex mutex_;
    std::condition_variable wake_;
    uint64_t generation_ = 0;   // bumped once per run, under mutex_
    bool stop_ = false;
    Job job_ = nullptr;
    void* ctx_ = nullptr;

    RunStats last_run_;

    alignas(64) std::atomic<int> arrived_{0};
    alignas(64) std::atomic<uint32_t> phase_{0};
    // take()'s counts per owner (items taken from the front in the low 32 bits, from the back in
    // the high ones), one line each, by phase parity: the barrier that opens phase p + 1 resets
    // those of parity (p + 1) & 1, which no thread uses any more (they were phase p - 1's).
    struct alignas(64) Taken {
        std::atomic<uint64_t> counts{0};
    };
    std::unique_ptr<Taken[]> taken_[2];
    alignas(64) std::atomic<uint64_t> slept_ns_{0};  // written on the slow path only
};

}  // namespace pocket::cpu
