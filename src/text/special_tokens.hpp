#pragma once
// Finds special tokens spelt out in raw text before the tokenizer model sees it: the text is
// cut into runs of plain text and whole special tokens, longest token text first, as
// llama.cpp's tokenizer_st_partition does.
#include "pocket/vocab.hpp"

#include <string_view>
#include <vector>

namespace pocket {

struct TextFragment {
    TokenId token = kNoToken;  // kNoToken: plain text
    size_t offset = 0;         // plain text: the byte range in the input
    size_t length = 0;
    bool is_token() const { return token != kNoToken; }
};

// USER_DEFINED tokens are always matched; CONTROL and UNKNOWN ones only with parse_special.
std::vector<TextFragment> split_special_tokens(const Vocab& vocab, std::string_view text, bool parse_special);

}  // namespace pocket
