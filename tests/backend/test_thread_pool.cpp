// The CPU pool's active thread count (-t for one token, -tb for a batch): only the active
// threads run a job, barriers count only them, and switching between runs never hangs or
// lets a late worker run a job that is not its own.
#include "backend/cpu/thread_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
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

namespace {

constexpr int kPhases = 3;
constexpr int64_t kItems = 1000;

struct Claims {
    pocket::cpu::ThreadPool* pool;
    std::atomic<int> taken[kPhases][kItems];
    std::atomic<int> chunks_by_thread[4];
    int slow_thread = -1;  // sleeps for each chunk it takes
};

// Three phases, each one claim loop over every item in chunks of 7, a barrier between them.
void claim_job(void* p, int ith) {
    auto* c = static_cast<Claims*>(p);
    for (int phase = 0; phase < kPhases; ++phase) {
        constexpr int64_t kChunk = 7;
        for (int64_t first = c->pool->claim(kChunk); first < kItems; first = c->pool->claim(kChunk)) {
            for (int64_t i = first; i < std::min(first + kChunk, kItems); ++i) c->taken[phase][i].fetch_add(1);
            c->chunks_by_thread[ith].fetch_add(1);
            if (ith == c->slow_thread) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        c->pool->barrier();
    }
}

}  // namespace

// Every item of every phase goes to exactly one thread, across runs and thread counts (the
// counter restarts at each barrier); a thread that is slow takes fewer chunks.
TEST(ThreadPool, ClaimsHandEachItemToOneThreadOncePerPhase) {
    pocket::cpu::ThreadPool pool(4);
    for (int round = 0; round < 300; ++round) {
        const int active = 2 + round % 3;
        pool.set_active(active);
        auto c = std::make_unique<Claims>();
        c->pool = &pool;
        pool.run(&claim_job, c.get());
        for (int phase = 0; phase < kPhases; ++phase)
            for (int64_t i = 0; i < kItems; ++i)
                ASSERT_EQ(c->taken[phase][i].load(), 1) << "item " << i << " of phase " << phase << ", round " << round;
    }
    pool.set_active(2);
    auto c = std::make_unique<Claims>();
    c->pool = &pool;
    c->slow_thread = 1;
    pool.run(&claim_job, c.get());
    const int chunks = static_cast<int>(kPhases * ((kItems + 6) / 7));
    EXPECT_EQ(c->chunks_by_thread[0].load() + c->chunks_by_thread[1].load(), chunks);
    // Thread 0 takes the other 142 chunks of a phase in the slow thread's first 5 ms.
    EXPECT_LT(c->chunks_by_thread[1].load(), chunks / 4) << "the slow thread was not passed over";
}
