#pragma once
// How many of the asked threads (-t) the CPU backend runs with, from how its last runs waited.
//
// A graph's ops meet at a barrier after each op, so a run goes at the pace of its slowest
// thread. When another process takes a core, one of our threads is off the CPU for a
// scheduler slice (milliseconds) while an op takes microseconds: every thread then waits on
// it, and two threads on one free core decode at less than half the speed of one (measured in
// bench/README.md). The sign is plain in the pool's barrier: waiters that spin out their
// budget and sleep, for most of the run. After two such runs in a row (or one long one, a
// prompt's) the next runs use one thread fewer; a second later one run tries the thread
// again, and a try that finds the core still taken doubles the time to the next. Results do
// not change: ops are bitwise identical for any thread count.
#include "backend/cpu/thread_pool.hpp"

#include <chrono>

namespace pocket::cpu {

class ThreadThrottle {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr auto kFirstRetry = std::chrono::seconds(1);
    static constexpr auto kLongestRetry = std::chrono::seconds(64);
    static constexpr uint32_t kMinBarriers = 8;  // fewer say nothing about the machine
    static constexpr int kCrowdedRuns = 2;        // in a row, before a thread is given up
    static constexpr auto kLongRun = std::chrono::milliseconds(100);  // or one run this long

    // Threads for the next run, given the asked count (>= 1).
    int threads(int asked, Clock::time_point now);
    // What the last run, made with threads(), saw.
    void observe(const ThreadPool::RunStats& run, Clock::time_point now);

    int threads_given_up() const { return given_up_; }

private:
    int given_up_ = 0;      // threads below the asked count
    int crowded_runs_ = 0;  // crowded runs in a row
    bool trying_ = false;   // this run tries one thread more than the last
    Clock::time_point changed_{};
    Clock::duration retry_after_ = kFirstRetry;
};

}  // namespace pocket::cpu
