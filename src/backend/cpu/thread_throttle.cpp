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
    if (crowded) {
        ++given_up_;
        retry_after_ = trying_ ? std::min<Clock::duration>(retry_after_ * 2, kLongestRetry) : Clock::duration(kFirstRetry);
        changed_ = now;
    } else if (trying_) {
        retry_after_ = kFirstRetry;
    }
    trying_ = false;
}

}  // namespace pocket::cpu
