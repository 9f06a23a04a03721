#include "text/spm_tokenizer.hpp"

#include "pocket/error.hpp"
#include "text/utf8.hpp"

#include <fmt/format.h>

#include <queue>

namespace pocket {

SpmTokenizer::SpmTokenizer(const Vocab& vocab) : vocab_(vocab) {
    // Byte fallback: "<0xXX>", or else the byte itself as a one-byte token.
    for (int b = 0; b < 256; ++b) {
        TokenId id = vocab.find(fmt::format("<0x{:02X}>", b));
        if (id == kNoToken) id = vocab.find(std::string(1, static_cast<char>(b)));
        byte_tokens_[b] = id;
    }
}

TokenId SpmTokenizer::byte_token(unsigned char byte) const {
    const TokenId id = byte_tokens_[byte];
    if (id == kNoToken) throw Error("SPM vocabulary has no token for byte 0x{:02X}", byte);
    return id;
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
    float score = 0.0f;
    size_t length = 0;
    // Highest score first; among equal scores the leftmost pair.
    bool operator<(const Candidate& o) const { return score < o.score || (score == o.score && left > o.left); }
};

}  // namespace

void SpmTokenizer::encode(std::string_view text, std::vector<TokenId>& out) const {
    std::vector<Symbol> symbols;
    for (size_t offset = 0; offset < text.size();) {
        const size_t n = std::min(utf8::sequence_length(static_cast<unsigned char>(text[offset])), text.size() - offset);
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({offset, n, index - 1, offset + n == text.size() ? -1 : index + 1});
        offset += n;
    }

    std::priority_queue<Candidate> queue;
    auto try_pair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const size_t length = symbols[left].length + symbols[right].length;
        const TokenId id = vocab_.find(text.substr(symbols[left].begin, length));
        if (id == kNoToken) return;
        queue.push({left, right, vocab_.token(id).score, length});
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_pair(i - 1, i);

    while (!queue.empty()) {
        const Candidate c = queue.top();
        queue.pop();
        Symbol& left = symbols[c.left];
        Symbol& right = symbols[c.right];
        // Stale: one side was merged since (symbols only grow, so the length tells).
        if (left.length == 0 || right.length == 0 || left.length + right.length != c.length) continue;
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = c.left;
        try_pair(left.prev, c.left);
        try_pair(c.left, left.next);
    }

    // Every merged symbol is a token by construction; single characters may not be.
    for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
        const std::string_view piece = text.substr(symbols[i].begin, symbols[i].length);
        const TokenId id = vocab_.find(piece);
        if (id != kNoToken) {
            out.push_back(id);
        } else {
            for (char c : piece) out.push_back(byte_token(static_cast<unsigned char>(c)));
        }
    }
}

}  // namespace pocket
