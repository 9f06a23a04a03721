#include "text/bpe_tokenizer.hpp"

#include "text/byte_encoding.hpp"
#include "text/pre_tokenizer_rules.hpp"
#include "text/utf8.hpp"

#include <queue>

namespace pocket {

BpeTokenizer::BpeTokenizer(const Vocab& vocab)
    : vocab_(vocab), pre_tokenizer_(pre_tokenizer_rule(vocab.pre()).patterns) {}

void BpeTokenizer::encode(std::string_view text, std::vector<TokenId>& out) const {
    std::string word;
    for (const std::string& raw : pre_tokenizer_.split(text)) {
        word.clear();
        byte_encoding::encode(raw, word);
        encode_word(word, out);
    }
}

namespace {

struct Symbol {
    size_t begin = 0;
    size_t length = 0;  // 0 once merged into its left neighbour
    int prev = -1;
    int next = -1;
};

struct Candidate {
    int left = 0;
    int right = 0;
    int rank = 0;
    size_t length = 0;
    // std::priority_queue pops the largest: make that the lowest rank, then the leftmost pair.
    bool operator<(const Candidate& o) const { return rank > o.rank || (rank == o.rank && left > o.left); }
};

}  // namespace

void BpeTokenizer::encode_word(const std::string& word, std::vector<TokenId>& out) const {
    const std::string_view w = word;
    if (vocab_.ignore_merges()) {
        const TokenId whole = vocab_.find(w);
        if (whole != kNoToken) {
            out.push_back(whole);
            return;
        }
    }

    std::vector<Symbol> symbols;
    for (size_t offset = 0; offset < w.size();) {
        const size_t n = std::min(utf8::sequence_length(static_cast<unsigned char>(w[offset])), w.size() - offset);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({offset, n, index - 1, offset + n == w.size() ? -1 : index + 1});
        offset += n;
    }

    std::priority_queue<Candidate> queue;
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const Symbol& l = symbols[left];
        const Symbol& r = symbols[right];
        const int rank = vocab_.merge_rank(w.substr(l.begin, l.length), w.substr(r.begin, r.length));
        if (rank >= 0) queue.push({left, right, rank, l.length + r.length});
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

    for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
        const std::string_view piece = w.substr(symbols[i].begin, symbols[i].length);
        const TokenId id = vocab_.find(piece);
        if (id != kNoToken) {
            out.push_back(id);
            continue;
        }
        // No token for the piece: llama.cpp tries each byte of it as a one-byte token and
        // drops the ones that are not.
        for (char c : piece) {
            const TokenId b = vocab_.find(std::string_view(&c, 1));
            if (b != kNoToken) out.push_back(b);
        }
    }
}

}  // namespace pocket
