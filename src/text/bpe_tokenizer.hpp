#pragma once
// Byte-level BPE (tokenizer.ggml.model = "gpt2"): the pre-tokenizer cuts text into words, each
// word is written in GPT-2's byte alphabet and merged pair by pair in merge-rank order (lowest
// rank first, leftmost on a tie), and the resulting pieces are looked up as tokens.
#include "pocket/vocab.hpp"
#include "text/pre_tokenizer.hpp"

#include <string_view>
#include <vector>

namespace pocket {

class BpeTokenizer {
public:
    explicit BpeTokenizer(const Vocab& vocab);
    void encode(std::string_view text, std::vector<TokenId>& out) const;

private:
    void encode_word(std::string_view word, std::vector<TokenId>& out) const;
    const Vocab& vocab_;
    PreTokenizer pre_tokenizer_;
};

}  // namespace pocket
