#pragma once
// What each `tokenizer.ggml.pre` value means for a byte-level BPE vocabulary: the regexes that
// split text into words (applied one after another, each splitting the pieces of the last),
// and the vocabulary flags llama.cpp ties to the same name.
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

struct PreTokenizerRule {
    std::vector<std::string> patterns;
    bool ignore_merges = false;  // a word that is a whole token is not merged from characters
    bool add_bos = false;        // default of add_bos_token when the key is absent
    bool clean_spaces = true;    // detokenizer cleans " ," " ." ... (llama.cpp's clean_spaces)
    bool add_sep = false;
    bool no_bos_token = false;   // the vocabulary has no BOS (chatglm)
};

// The rule for a pre-tokenizer name; throws pocket::Error for an unknown name or one that
// needs code pocket does not have.
PreTokenizerRule pre_tokenizer_rule(std::string_view pre);

}  // namespace pocket
