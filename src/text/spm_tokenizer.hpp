#pragma once
// SentencePiece-style tokenizer (tokenizer.ggml.model = "llama"), as llama.cpp runs it: spaces
// become U+2581, then, from single UTF-8 characters, the adjacent pair whose concatenation is
// the highest-scoring token is merged first (the leftmost on a tie) until no pair is a token;
// a piece left without a token is written as byte tokens <0xXX>.
#include "pocket/vocab.hpp"

#include <string_view>
#include <vector>

namespace pocket {

class SpmTokenizer {
public:
    explicit SpmTokenizer(const Vocab& vocab);
    // prefix_space: put a space first (add_space_prefix, at the start or after a special token).
    void encode(std::string_view text, bool prefix_space, std::vector<TokenId>& out) const;

private:
    TokenId byte_token(unsigned char byte) const;
    const Vocab& vocab_;
    TokenId byte_tokens_[256];
};

}  // namespace pocket
