#pragma once
// A tokenizer vocabulary as read from GGUF metadata: only `general.name` and `tokenizer.*`
// keys are read, so a vocab-only file of any architecture loads. Defaults and name-based
// fix-ups (special ids, add_bos, EOG tokens, control-looking tokens) follow llama.cpp, so that
// the same file tokenizes the same way in both.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

class GgufFile;

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

enum class VocabType { Spm, Bpe, Wpm };

// Token attributes as a bit set (llama.cpp's llama_token_attr values).
enum TokenAttr : uint32_t {
    kTokenUndefined = 0,
    kTokenUnknown = 1u << 0,
    kTokenUnused = 1u << 1,
    kTokenNormal = 1u << 2,
    kTokenControl = 1u << 3,
    kTokenUserDefined = 1u << 4,
    kTokenByte = 1u << 5,
    kTokenNormalized = 1u << 6,
    kTokenLStrip = 1u << 7,   // a matched special token eats the whitespace before it
    kTokenRStrip = 1u << 8,   // ... or after it
    kTokenSingleWord = 1u << 9,
};

struct TokenData {
    std::string text;
    float score = 0.0f;
    uint32_t attr = kTokenNormal;
};

struct SpecialTokenIds {
    TokenId bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken;
    TokenId sep = kNoToken, pad = kNoToken, mask = kNoToken;
    TokenId fim_pre = kNoToken, fim_suf = kNoToken, fim_mid = kNoToken;
    TokenId fim_pad = kNoToken, fim_rep = kNoToken, fim_sep = kNoToken;
};

class Vocab {
public:
    // Reads the vocabulary of an opened GGUF; throws pocket::Error naming the file and key.
    static Vocab from_gguf(const GgufFile& file);

    Vocab(Vocab&&) noexcept;
    Vocab& operator=(Vocab&&) noexcept;
    ~Vocab();

    VocabType type() const;
    std::string_view model() const;       // tokenizer.ggml.model: "llama", "gpt2", "bert"
    std::string_view pre() const;         // pre-tokenizer in effect ("default" when the key is absent)
    std::string_view name() const;        // general.name, empty when absent
    // The file it was read from, for errors that only tokenizing finds ("" when none).
    const std::string& source() const;

    size_t size() const;
    const TokenData& token(TokenId id) const;  // throws on an id out of range
    TokenId find(std::string_view text) const;  // kNoToken when no token has this text
    size_t max_token_bytes() const;

    // Rank of the BPE merge "left right" (lower merges first), -1 when there is none.
    int merge_rank(std::string_view left, std::string_view right) const;

    const SpecialTokenIds& special() const;
    bool is_eog(TokenId id) const;         // ends generation (EOS, EOT, <|im_end|>, ...)
    bool is_control(TokenId id) const;
    std::span<const TokenId> eog_tokens() const;

    bool add_bos() const;
    bool add_eos() const;
    bool add_sep() const;
    bool add_space_prefix() const;   // SPM: prefix text with a space
    bool ignore_merges() const;      // BPE: a pre-token that is a whole token skips merging
    bool clean_spaces() const;       // detokenizer removes spaces before punctuation
    bool lowercase() const;          // WPM normalizer
    bool strip_accents() const;      // WPM normalizer

    // CONTROL, USER_DEFINED and UNKNOWN tokens, longest text first: the tokens matched in raw
    // text before the tokenizer model runs.
    std::span<const TokenId> special_tokens_longest_first() const;

    struct Data;

private:
    explicit Vocab(std::unique_ptr<Data> data);
    std::unique_ptr<Data> d_;
};

}  // namespace pocket
