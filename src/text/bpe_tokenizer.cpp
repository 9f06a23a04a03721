#include "text/bpe_tokenizer.hpp"

#include "text/byte_encoding.hpp"
#include "text/pair_merger.hpp"
#include "text/pre_tokenizer_rules.hpp"

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

void BpeTokenizer::encode_word(std::string_view word, std::vector<TokenId>& out) const {
    if (vocab_.ignore_merges()) {
        const TokenId whole = vocab_.find(word);
        if (whole != kNoToken) {
            out.push_back(whole);
            return;
        }
    }
    auto rank = [&](std::string_view left, std::string_view right) -> std::optional<int> {
        const int r = vocab_.merge_rank(left, right);
        return r < 0 ? std::nullopt : std::optional<int>(r);
    };
    auto emit = [&](std::string_view piece) {
        const TokenId id = vocab_.find(piece);
        if (id != kNoToken) {
            out.push_back(id);
            return;
        }
        // No token for the piece: llama.cpp tries each byte of it as a one-byte token and
        // drops the ones that are not.
        for (char c : piece) {
            const TokenId b = vocab_.find(std::string_view(&c, 1));
            if (b != kNoToken) out.push_back(b);
        }
    };
    merge_pairs(word, rank, emit);
}

}  // namespace pocket
