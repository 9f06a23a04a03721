// The CPU backend's thread count under a busy neighbour (see thread_throttle.hpp).
#include "backend/cpu/thread_throttle.hpp"

#include <algorithm>

namespace pocket::cpu {

int ThreadThrottle::threads(int asked, Clock::time_point now) {
    if (asked > 1 && given_up_ > 0 && now - changed_ >= retry_after_) {
        --given_up_;
        trying_ = true;
        changed_ = now;
    }
    return std::max(1, asked - given_up_);
}

void ThreadThrottle::observe(const ThreadPool::RunStats& run, Clock::time_point now) {
    if (run.threads < 2 || run.barriers < kMinBarriers) return;
    // Each barrier has threads - 1 waiters. Waiting for a late thread is normal (a few %
    // of a decoding run, a third of a prompt's on a noisy machine); asleep more than half the
    // run, they are waiting for a thread that has no core.
    const bool crowded = run.slept_ns * 2 > run.wall_ns * static_cast<uint64_t>(run.threads - 1);
    // A single short stalled run is often a burst of the host's (measured: one decoding step
    // in six, quiet); a neighbour stays, and fills a long run. A retry answers at once: the
    // neighbour was there before it.
    crowded_runs_ = crowded ? crowded_runs_ + 1 : 0;
    const bool long_run = std::chrono::nanoseconds(run.wall_ns) >= kLongRun;
    if (crowded_runs_ >= kCrowdedRuns || (crowded && (trying_ || long_run))) {
        ++given_up_;
        retry_after_ = trying_ ? std::min<Clock::duration>(retry_after_ * 2, kLongestRetry) : Clock::duration(kFirstRetry);
        changed_ = now;
        crowded_runs_ = 0;
    } else if (trying_ && !crowded) {
        retry_after_ = kFirstRetry;
    }
    trying_ = false;
}

}  // namespace pocket::cpu
