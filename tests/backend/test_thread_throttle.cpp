// The CPU backend's thread count under a busy neighbour: one thread fewer after two runs in a
// row (or one long run) whose waiters slept most of the time, a retry after a second, a longer
// wait after each failed retry, and no change from runs that waited normally, stalled once
// briefly, or were too short to tell.
#include "backend/cpu/thread_throttle.hpp"

#include <gtest/gtest.h>

namespace {

using pocket::cpu::ThreadPool;
using pocket::cpu::ThreadThrottle;
using namespace std::chrono_literals;

const ThreadThrottle::Clock::time_point t0{};

// 100 barriers in 10 ms, the waiters asleep for 60% of it, or for 40%.
ThreadPool::RunStats crowded(int threads) { return {threads, 100, 6'000'000ull * (threads - 1), 10'000'000}; }
ThreadPool::RunStats calm(int threads) { return {threads, 100, 4'000'000ull * (threads - 1), 10'000'000}; }

// Two crowded runs in a row at the threads the throttle gave.
void crowd(ThreadThrottle& t, int asked, ThreadThrottle::Clock::time_point now) {
    const int n = t.threads(asked, now);
    t.observe(crowded(n), now);
    t.observe(crowded(n), now);
}

}  // namespace

TEST(ThreadThrottle, CalmRunsKeepEveryThread) {
    ThreadThrottle t;
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(t.threads(4, t0 + i * 10ms), 4);
        t.observe(calm(4), t0 + i * 10ms);
    }
    // Mostly sleeping, but too few barriers to say anything.
    t.observe({4, ThreadThrottle::kMinBarriers - 1, 30'000'000, 10'000'000}, t0 + 1s);
    EXPECT_EQ(t.threads(4, t0 + 1s), 4);
}

TEST(ThreadThrottle, OneStalledRunIsNotANeighbour) {
    ThreadThrottle t;
    for (int i = 0; i < 10; ++i) {
        ASSERT_EQ(t.threads(2, t0 + i * 10ms), 2);
        t.observe(i % 2 ? calm(2) : crowded(2), t0 + i * 10ms);
    }
    EXPECT_EQ(t.threads(2, t0 + 100ms), 2);
    t.observe(crowded(2), t0 + 100ms);
    t.observe(crowded(2), t0 + 110ms);
    EXPECT_EQ(t.threads(2, t0 + 120ms), 1) << "two in a row";
}

TEST(ThreadThrottle, OneLongCrowdedRunIsANeighbour) {
    ThreadThrottle t;
    const uint64_t wall = std::chrono::nanoseconds(ThreadThrottle::kLongRun).count();
    t.observe({2, 100, wall * 6 / 10, wall}, t0);  // a prompt's run, asleep 60% of it
    EXPECT_EQ(t.threads(2, t0 + 1ms), 1);
}

TEST(ThreadThrottle, GivesUpOneThreadPerTwoCrowdedRuns) {
    ThreadThrottle t;
    EXPECT_EQ(t.threads(4, t0), 4);
    crowd(t, 4, t0);
    EXPECT_EQ(t.threads(4, t0 + 1ms), 3);
    crowd(t, 4, t0 + 1ms);
    EXPECT_EQ(t.threads(4, t0 + 2ms), 2);
    t.observe(calm(2), t0 + 2ms);
    EXPECT_EQ(t.threads(4, t0 + 3ms), 2) << "a calm run at the reduced count is not a retry";
    // Never below one thread, whatever is asked.
    crowd(t, 4, t0 + 3ms);
    EXPECT_EQ(t.threads(4, t0 + 4ms), 1);
    EXPECT_EQ(t.threads(2, t0 + 5ms), 1);
    EXPECT_EQ(t.threads(1, t0 + 6ms), 1);
}

TEST(ThreadThrottle, RetriesAfterASecondAndBacksOffWhileStillCrowded) {
    ThreadThrottle t;
    crowd(t, 2, t0);
    EXPECT_EQ(t.threads(2, t0 + 999ms), 1);
    // Retry after 1 s: one crowded run sends it back, and the next retry waits 2 s, then 4 s.
    auto now = t0 + 1s;
    for (auto wait : {2s, 4s, 8s}) {
        ASSERT_EQ(t.threads(2, now), 2) << "retry at " << (now - t0) / 1ms << " ms";
        t.observe(crowded(2), now);
        EXPECT_EQ(t.threads(2, now + wait - 1ms), 1);
        now += wait;
    }
    // A calm retry keeps the thread and resets the wait.
    ASSERT_EQ(t.threads(2, now), 2);
    t.observe(calm(2), now);
    EXPECT_EQ(t.threads(2, now + 1ms), 2);
    crowd(t, 2, now + 2ms);
    EXPECT_EQ(t.threads(2, now + 2ms + 999ms), 1);
    EXPECT_EQ(t.threads(2, now + 2ms + 1s), 2) << "back to a 1 s wait after a calm retry";
}

TEST(ThreadThrottle, WaitIsBounded) {
    ThreadThrottle t;
    crowd(t, 2, t0);
    auto now = t0;
    for (int i = 0; i < 20; ++i) {  // far past 1 s * 2^6
        now += ThreadThrottle::kLongestRetry;
        ASSERT_EQ(t.threads(2, now), 2) << "retry " << i;
        t.observe(crowded(2), now);
    }
}
