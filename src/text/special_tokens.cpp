#include "text/special_tokens.hpp"

namespace pocket {

namespace {

// The C locale's isspace, which llama.cpp uses for LSTRIP/RSTRIP.
bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

}  // namespace

std::vector<TextFragment> split_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special) {
    std::vector<TextFragment> fragments;
    if (text.empty()) return fragments;
    fragments.push_back({kNoToken, 0, text.size()});

    for (TokenId id : vocab.special_tokens_longest_first()) {
        const TokenData& data = vocab.token(id);
        if (!parse_special && (data.attr & (kTokenControl | kTokenUnknown))) continue;
        const std::string_view needle = data.text;

        std::vector<TextFragment> next;
        next.reserve(fragments.size());
        for (const TextFragment& f : fragments) {
            if (f.is_token()) {
                next.push_back(f);
                continue;
            }
            size_t begin = f.offset;
            size_t length = f.length;
            while (true) {
                const size_t match = text.substr(0, begin + length).find(needle, begin);
                if (match == std::string_view::npos) {
                    if (length > 0) next.push_back({kNoToken, begin, length});
                    break;
                }
                size_t left = match - begin;
                if (data.attr & kTokenLStrip) {
                    while (left > 0 && is_ascii_space(text[begin + left - 1])) --left;
                }
                if (left > 0) next.push_back({kNoToken, begin, left});
                next.push_back({id, 0, 0});

                size_t right_begin = match + needle.size();
                size_t right_length = begin + length - right_begin;
                if (data.attr & kTokenRStrip) {
                    while (right_length > 0 && is_ascii_space(text[right_begin])) ++right_begin, --right_length;
                }
                begin = right_begin;
                length = right_length;
                if (length == 0) break;
            }
        }
        fragments = std::move(next);
    }
    return fragments;
}

}  // namespace pocket
