#pragma once
// The merge loop SPM and BPE share: split a word into UTF-8 characters, then repeatedly join
// the adjacent pair that ranks best (lowest key; the leftmost pair on a tie) until no pair
// ranks at all. Only the ranking differs: token scores for SPM, merge ranks for BPE.
#include "text/utf8.hpp"

#include <algorithm>
#include <optional>
#include <queue>
#include <string_view>
#include <type_traits>
#include <vector>

namespace pocket {

// rank(left, right) -> std::optional<Key>: the key of joining two adjacent pieces (views into
// `text`), or nullopt when they may not join. Calls `emit(piece)` for each final piece in order.
template <class Rank, class Emit>
void merge_pairs(std::string_view text, Rank&& rank, Emit&& emit) {
    using Key = typename std::invoke_result_t<Rank, std::string_view, std::string_view>::value_type;
    struct Symbol {
        size_t begin, length;  // length 0 once merged into its left neighbour
        int prev, next;
    };
    struct Candidate {
        Key key;
        int left, right;
        size_t length;
        // priority_queue pops the largest: make that the lowest key, then the leftmost pair.
        bool operator<(const Candidate& o) const { return o.key < key || (!(key < o.key) && left > o.left); }
    };

    std::vector<Symbol> symbols;
    for (size_t offset = 0; offset < text.size();) {
        const size_t n = std::min(utf8::sequence_length(static_cast<unsigned char>(text[offset])), text.size() - offset);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({offset, n, index - 1, offset + n == text.size() ? -1 : index + 1});
        offset += n;
    }
    auto view = [&](const Symbol& s) { return text.substr(s.begin, s.length); };

    std::priority_queue<Candidate> queue;
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        if (auto key = rank(view(symbols[left]), view(symbols[right]))) {
            queue.push({*key, left, right, symbols[left].length + symbols[right].length});
        }
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_pair(i - 1, i);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[c.left];
        Symbol& right = symbols[c.right];
        // Stale: a side changed since the pair was queued (symbols only grow, so lengths tell).
        if (left.length == 0 || right.length == 0 || left.length + right.length != c.length) continue;
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        try_pair(left.prev, c.left);
        try_pair(c.left, left.next);
    }

    for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) emit(view(symbols[i]));
}

}  // namespace pocket
