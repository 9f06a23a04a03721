// The planner never lets two tensors that are alive at the same step overlap, and reuses
// memory once a tensor is dead.
#include "graph/memory_planner.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <vector>

namespace pocket::detail {
namespace {

TEST(MemoryPlanner, ChainReusesTwoSlots) {
    // a -> b -> c -> d, each read only by the next: two regions suffice.
    std::vector<PlanItem> items = {{100, 0, 1, 0}, {100, 1, 2, 0}, {100, 2, 3, 0}, {100, 3, 3, 0}};
    const size_t arena = plan_memory(items, 64);
    EXPECT_EQ(arena, 256u);
    EXPECT_NE(items[0].offset, items[1].offset);
    EXPECT_EQ(items[0].offset, items[2].offset);
}

TEST(MemoryPlanner, RandomLifetimesNeverOverlapWhileAlive) {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        const int n = 1 + static_cast<int>(rng() % 60);
        std::vector<PlanItem> items(static_cast<size_t>(n));
        size_t total = 0;
        for (auto& it : items) {
            it.size = 1 + rng() % 5000;
            it.start = static_cast<int>(rng() % 40) - 1;
            it.end = rng() % 10 == 0 ? INT_MAX : it.start + static_cast<int>(rng() % 15);
            total += (it.size + 63) / 64 * 64;
        }
        const size_t arena = plan_memory(items, 64);
        EXPECT_LE(arena, total);
        for (size_t i = 0; i < items.size(); ++i) {
            EXPECT_EQ(items[i].offset % 64, 0u);
            EXPECT_LE(items[i].offset + items[i].size, arena);
            for (size_t j = i + 1; j < items.size(); ++j) {
                const bool live_together = items[i].start <= items[j].end && items[j].start <= items[i].end;
                const bool overlap = items[i].offset < items[j].offset + items[j].size &&
                                     items[j].offset < items[i].offset + items[i].size;
                ASSERT_FALSE(live_together && overlap) << "round " << round << " items " << i << ", " << j;
            }
        }
    }
}

}  // namespace
}  // namespace pocket::detail
