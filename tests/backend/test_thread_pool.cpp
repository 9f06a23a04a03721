// The CPU pool's active thread count (-t for one token, -tb for a batch): only the active
// threads run a job, barriers count only them, and switching between runs never hangs or
// lets a late worker run a job that is not its own.
#include "backend/cpu/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {

struct Record {
    pocket::cpu::ThreadPool* pool;
    std::atomic<unsigned> ran{0};
    std::atomic<int> before{0}, after_ok{1};
    int active = 0;
};

// Each thread marks itself, meets the others at a barrier, then checks that every active
// thread had arrived.
void job(void* p, int ith) {
    auto* r = static_cast<Record*>(p);
    r->ran.fetch_or(1u << ith);
    r->before.fetch_add(1);
    r->pool->barrier();
    if (r->before.load() != r->active) r->after_ok.store(0);
}

}  // namespace

TEST(ThreadPool, OnlyTheActiveThreadsRunAndMeet) {
    pocket::cpu::ThreadPool pool(4);
    EXPECT_EQ(pool.active(), 4);
    for (int round = 0; round < 2000; ++round) {
        const int active = 1 + round % 4;  // 1, 2, 3, 4, 1, ...: every switch, up and down
        pool.set_active(active);
        Record r{&pool};
        r.active = active;
        pool.run(&job, &r);
        ASSERT_EQ(r.ran.load(), (1u << active) - 1) << "round " << round << ", " << active << " active";
        ASSERT_EQ(r.after_ok.load(), 1) << "a barrier opened before every active thread arrived, round " << round;
    }
    pool.set_active(99);
    EXPECT_EQ(pool.active(), 4);
    pool.set_active(0);
    EXPECT_EQ(pool.active(), 1);
}

namespace {

struct LateThread {
    pocket::cpu::ThreadPool* pool;
};

// Thread 1 comes to the barrier long after thread 0's spin has run out.
void late_job(void* p, int ith) {
    auto* r = static_cast<LateThread*>(p);
    if (ith == 1) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    r->pool->barrier();
}

}  // namespace

TEST(ThreadPool, ReportsBarriersAndTheTimeWaitersSlept) {
    pocket::cpu::ThreadPool pool(2);
    LateThread r{&pool};
    pool.run(&late_job, &r);
    const auto run = pool.last_run();
    EXPECT_EQ(run.threads, 2);
    EXPECT_EQ(run.barriers, 2u) << "the job's barrier and the closing one";
    // Thread 0 waited 30 ms for thread 1 at the job's barrier: it spun out (microseconds) and
    // slept. (How long it slept is left loose: a loaded machine may deschedule it too.)
    EXPECT_GT(run.slept_ns, 0u);
    EXPECT_GE(run.wall_ns, 30'000'000u);
    pool.set_active(1);
    pool.run(&late_job, &r);
    EXPECT_EQ(pool.last_run().threads, 1);
    EXPECT_EQ(pool.last_run().barriers, 0u);
}
