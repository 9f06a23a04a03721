#pragma once
// The state behind pocket::Vocab, shared by the files of src/text.
#include "pocket/vocab.hpp"

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pocket {

// Hashing that lets maps keyed by std::string be searched with a string_view.
struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
template <class V>
using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;

struct Vocab::Data {
    std::string source;  // the GGUF's path, for errors found when tokenizing
    VocabType type = VocabType::Spm;
    std::string model, pre, name, architecture;

    std::vector<TokenData> tokens;
    TextMap<TokenId> by_text;
    TextMap<int> merge_ranks;  // "left right" -> rank
    size_t max_token_bytes = 0;

    SpecialTokenIds special;
    std::vector<TokenId> eog;  // sorted
    std::vector<TokenId> special_longest_first;

    bool add_bos = false, add_eos = false, add_sep = false, add_space_prefix = false;
    bool ignore_merges = false, clean_spaces = false;
    bool lowercase = true, strip_accents = true;
};

}  // namespace pocket
