#pragma once
// Text to token ids and back, matching llama.cpp's tokenizers (SentencePiece-style "llama",
// byte-level BPE "gpt2" with its pre-tokenizers, WordPiece "bert"). Thread-safe for
// concurrent const use.
#include "pocket/vocab.hpp"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

class Tokenizer {
public:
    explicit Tokenizer(Vocab vocab);
    // Opens a GGUF (a vocab-only file is enough) and reads its vocabulary.
    static Tokenizer from_file(const std::string& gguf_path);

    Tokenizer(Tokenizer&&) noexcept;
    Tokenizer& operator=(Tokenizer&&) noexcept;
    ~Tokenizer();

    const Vocab& vocab() const;

    // add_special: BOS/EOS/SEP as the vocabulary asks (add_bos_token, add_eos_token).
    // parse_special: text spelling a CONTROL token becomes that token; USER_DEFINED tokens
    // are always matched.
    std::vector<TokenId> tokenize(std::string_view text, bool add_special, bool parse_special = false) const;

    // The bytes a token stands for. CONTROL/UNKNOWN tokens give their text only with `special`.
    // A piece may be part of a UTF-8 sequence (byte tokens); see TokenStreamDecoder.
    const std::string& token_to_piece(TokenId id) const;  // as with special = true
    std::string token_to_piece(TokenId id, bool special) const;

    // Joins pieces as llama.cpp's llama_detokenize does: drops the SPM prefix space, and with
    // remove_special the leading BOS and trailing EOS; unparse_special renders CONTROL tokens.
    std::string detokenize(std::span<const TokenId> ids, bool remove_special = false,
                           bool unparse_special = false) const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

// Turns a stream of tokens into text that is always complete, valid UTF-8: bytes of an
// unfinished sequence wait for the next token; bytes that can never form one become U+FFFD.
class TokenStreamDecoder {
public:
    explicit TokenStreamDecoder(const Tokenizer& tokenizer, bool special = false);
    std::string push(TokenId id);  // text ready to print (possibly empty)
    std::string finish();          // whatever is left, invalid bytes replaced
private:
    const Tokenizer* tokenizer_;
    bool special_;
    std::string pending_;
};

}  // namespace pocket
