// Greedy best-fit placement over the items' lifetimes (see memory_planner.hpp).
#include "graph/memory_planner.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace pocket::detail {

namespace {

struct Block {
    size_t offset;
    size_t size;
};

// Free regions, sorted by offset and coalesced; the arena grows at its end.
class FreeList {
public:
    size_t allocate(size_t size) {
        size_t best = blocks_.size();
        for (size_t i = 0; i < blocks_.size(); ++i)
            if (blocks_[i].size >= size && (best == blocks_.size() || blocks_[i].size < blocks_[best].size)) best = i;
        if (best < blocks_.size()) {
            const size_t offset = blocks_[best].offset;
            blocks_[best].offset += size;
            blocks_[best].size -= size;
            if (blocks_[best].size == 0) blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
            return offset;
        }
        // No hole fits: grow the arena, starting inside a free block that touches its end.
        size_t offset = end_;
        if (!blocks_.empty() && blocks_.back().offset + blocks_.back().size == end_) {
            offset = blocks_.back().offset;
            blocks_.pop_back();
        }
        end_ = offset + size;
        high_ = std::max(high_, end_);
        return offset;
    }

    void release(size_t offset, size_t size) {
        auto it = std::lower_bound(blocks_.begin(), blocks_.end(), offset,
                                   [](const Block& b, size_t o) { return b.offset < o; });
        it = blocks_.insert(it, Block{offset, size});
        // Merge with the next block, then with the previous one.
        if (auto next = it + 1; next != blocks_.end() && it->offset + it->size == next->offset) {
            it->size += next->size;
            blocks_.erase(next);
        }
        if (it != blocks_.begin()) {
            auto prev = it - 1;
            if (prev->offset + prev->size == it->offset) {
                prev->size += it->size;
                blocks_.erase(it);
            }
        }
    }

    size_t high_water() const { return high_; }

private:
    std::vector<Block> blocks_;
    size_t end_ = 0;
    size_t high_ = 0;
};

}  // namespace

size_t plan_memory(std::span<PlanItem> items, size_t align) {
    std::vector<size_t> by_start(items.size()), by_end(items.size());
    std::iota(by_start.begin(), by_start.end(), 0);
    std::iota(by_end.begin(), by_end.end(), 0);
    auto end_of = [&](size_t i) { return std::max(items[i].end, items[i].start); };
    std::stable_sort(by_start.begin(), by_start.end(), [&](size_t a, size_t b) { return items[a].start < items[b].start; });
    std::stable_sort(by_end.begin(), by_end.end(), [&](size_t a, size_t b) { return end_of(a) < end_of(b); });

    auto rounded = [&](size_t size) { return (std::max<size_t>(size, 1) + align - 1) / align * align; };
    FreeList free_list;
    size_t s = 0, e = 0;
    while (s < by_start.size()) {
        const int step = items[by_start[s]].start;
        // Release everything that died before this step, then place what is born at it.
        while (e < by_end.size() && end_of(by_end[e]) < step) {
            free_list.release(items[by_end[e]].offset, rounded(items[by_end[e]].size));
            ++e;
        }
        for (; s < by_start.size() && items[by_start[s]].start == step; ++s)
            items[by_start[s]].offset = free_list.allocate(rounded(items[by_start[s]].size));
    }
    return free_list.high_water();
}

}  // namespace pocket::detail
