#pragma once
// SentencePiece-style tokenizer (tokenizer.ggml.model = "llama"), as llama.cpp runs it: start
// from single UTF-8 characters, repeatedly merge the adjacent pair whose concatenation is the
// highest-scoring token (the leftmost pair on a tie), then emit each piece as its token or,
// failing that, as byte tokens <0xXX>.
#include "pocket/vocab.hpp"

#include <string_view>
#include <vector>

namespace pocket {

class SpmTokenizer {
public:
    explicit SpmTokenizer(const Vocab& vocab);
    // `text` is already escaped (spaces as U+2581) and prefixed as the vocabulary asks.
    void encode(std::string_view text, std::vector<TokenId>& out) const;

private:
    TokenId byte_token(unsigned char byte) const;
    const Vocab& vocab_;
    TokenId byte_tokens_[256];
};

}  // namespace pocket
