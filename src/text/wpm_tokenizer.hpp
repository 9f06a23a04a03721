#pragma once
// WordPiece (tokenizer.ggml.model = "bert"), as llama.cpp's WPM tokenizer runs it: normalize
// (lower-case, strip accents), split on whitespace and around punctuation and CJK characters,
// then cover each word greedily with the longest vocabulary pieces. The vocabulary spells
// word-initial pieces with a leading U+2581 and continuations ("##x" in BERT) bare.
#include "pocket/vocab.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pocket {

class WpmTokenizer {
public:
    explicit WpmTokenizer(const Vocab& vocab) : vocab_(vocab) {}
    void encode(std::string_view text, std::vector<TokenId>& out) const;

    // The normalized words of `text` (exposed for tests).
    static std::vector<std::string> split_words(std::string_view text, bool lowercase, bool strip_accents);

private:
    const Vocab& vocab_;
};

}  // namespace pocket
