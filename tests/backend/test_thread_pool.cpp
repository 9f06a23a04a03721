// The CPU pool's active thread count (-t for one token, -tb for a batch): only the active
// threads run a job, barriers count only them, and switching between runs never hangs or
// lets a late worker run a job that is not its own.
#include "backend/cpu/op_context.hpp"
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

struct Chunks {
    pocket::cpu::ThreadPool* pool;
    int nth = 0;
    std::atomic<int> taken[kPhases][kItems];
    std::atomic<int> chunks_by_thread[4];
    std::atomic<int> out_of_order{0};
    int slow_thread = -1;  // sleeps for each chunk it takes
};

// Three phases of one loop each over every item in chunks of 7, a barrier between them; the
// last one's shares are left for the run's closing barrier, so that a run leaves shares
// taken for the next runs to find reset (3 barriers a run: runs start on either parity).
void chunks_job(void* p, int ith) {
    auto* c = static_cast<Chunks*>(p);
    const pocket::cpu::OpContext ctx{ith, c->nth, c->pool};
    const auto [own0, own1] = ctx.range(kItems);
    for (int phase = 0; phase < kPhases; ++phase) {
        int64_t next_own = own0;  // the own share comes first and in order
        int64_t next_end[4];      // the others' shares: taken from their ends, backwards
        for (int t = 0; t < c->nth; ++t) next_end[t] = kItems * (t + 1) / c->nth;
        ctx.for_each_chunk_shared(kItems, 7, [&](int64_t first, int64_t last) {
            if (first >= own0 && first < own1) {
                if (first != next_own) c->out_of_order.fetch_add(1);
                next_own = last;
            } else {
                int owner = 0;
                while (first >= kItems * (owner + 1) / c->nth) ++owner;
                if (last > next_end[owner]) c->out_of_order.fetch_add(1);  // other thieves may take between
                next_end[owner] = first;
            }
            for (int64_t i = first; i < last; ++i) c->taken[phase][i].fetch_add(1);
            c->chunks_by_thread[ith].fetch_add(1);
            if (ith == c->slow_thread) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        });
        if (phase + 1 < kPhases) c->pool->barrier();
    }
}

}  // namespace

// Every item of every phase goes to exactly one thread, across runs and thread counts (the
// shares restart at each barrier), each thread's own share in order; a slow thread's share is
// mostly done by the others.
TEST(ThreadPool, SharedChunksGoToOneThreadEachAndAwayFromASlowThread) {
    pocket::cpu::ThreadPool pool(4);
    for (int round = 0; round < 300; ++round) {
        const int active = 2 + round % 3;
        pool.set_active(active);
        auto c = std::make_unique<Chunks>();
        c->pool = &pool;
        c->nth = active;
        pool.run(&chunks_job, c.get());
        for (int phase = 0; phase < kPhases; ++phase)
            for (int64_t i = 0; i < kItems; ++i)
                ASSERT_EQ(c->taken[phase][i].load(), 1) << "item " << i << " of phase " << phase << ", round " << round;
        ASSERT_EQ(c->out_of_order.load(), 0) << "chunks out of order (own: forwards; others': backwards), round " << round;
    }
    pool.set_active(2);
    auto c = std::make_unique<Chunks>();
    c->pool = &pool;
    c->nth = 2;
    c->slow_thread = 1;
    pool.run(&chunks_job, c.get());
    const int total = c->chunks_by_thread[0].load() + c->chunks_by_thread[1].load();
    // Thread 0 does its 72 chunks and then the slow thread's, from the back, within the slow
    // thread's first 5 ms of each phase.
    EXPECT_LT(c->chunks_by_thread[1].load(), total / 4) << "the slow thread's share was not taken over";
    EXPECT_EQ(c->out_of_order.load(), 0) << "chunks out of order (own: forwards; others': backwards)";
}
