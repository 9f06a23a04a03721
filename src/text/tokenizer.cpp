#include "pocket/tokenizer.hpp"

#include "pocket/error.hpp"
#include "pocket/gguf.hpp"
#include "text/bpe_tokenizer.hpp"
#include "text/detokenizer.hpp"
#include "text/special_tokens.hpp"
#include "text/spm_tokenizer.hpp"
#include "text/wpm_tokenizer.hpp"

#include <spdlog/spdlog.h>

#include <optional>

namespace pocket {

struct Tokenizer::Impl {
    Vocab vocab;
    std::optional<SpmTokenizer> spm;
    std::optional<BpeTokenizer> bpe;
    std::optional<WpmTokenizer> wpm;
    std::vector<std::string> pieces;  // token_to_piece(id, special = true), for every id

    explicit Impl(Vocab v) : vocab(std::move(v)) {
        switch (vocab.type()) {
            case VocabType::Spm: spm.emplace(vocab); break;
            case VocabType::Bpe: bpe.emplace(vocab); break;
            case VocabType::Wpm: wpm.emplace(vocab); break;
        }
        pieces.reserve(vocab.size());
        for (size_t id = 0; id < vocab.size(); ++id) pieces.push_back(token_piece(vocab, static_cast<TokenId>(id), true));
    }

    TokenId required(TokenId id, const char* what, const char* flag) const {
        if (id == kNoToken)
            throw Error("{}: the model's metadata says to add a {} token to every text ({}), but the model has no {} token: "
                        "the file is inconsistent (--override-kv {}=bool:false works around it)",
                        vocab.source().empty() ? "the model" : vocab.source(), what, flag, what, flag);
        return id;
    }
};

Tokenizer::Tokenizer(Vocab vocab) : impl_(std::make_unique<Impl>(std::move(vocab))) {}

Tokenizer Tokenizer::from_file(const std::string& gguf_path) {
    const GgufFile file = GgufFile::open(gguf_path);
    return Tokenizer(Vocab::from_gguf(file));
}

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

const Vocab& Tokenizer::vocab() const { return impl_->vocab; }

std::vector<TokenId> Tokenizer::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    const Vocab& v = impl_->vocab;
    const bool wpm = v.type() == VocabType::Wpm;
    std::vector<TokenId> out;

    // BERT-style vocabularies always frame the text as [CLS] ... [SEP]; the others add BOS/EOS
    // only where the vocabulary asks.
    if (add_special && (wpm || v.add_bos())) out.push_back(impl_->required(v.special().bos, "BOS", "tokenizer.ggml.add_bos_token"));

    bool after_special = true;  // SPM puts a space before text at the start or after a special token
    for (const TextFragment& f : split_special_tokens(v, text, parse_special)) {
        if (f.is_token()) {
            out.push_back(f.token);
            after_special = true;
            continue;
        }
        const std::string_view piece = text.substr(f.offset, f.length);
        if (impl_->spm) impl_->spm->encode(piece, v.add_space_prefix() && after_special, out);
        else if (impl_->bpe) impl_->bpe->encode(piece, out);
        else impl_->wpm->encode(piece, out);
        after_special = false;
    }

    if (add_special && !wpm && v.add_bos() && out.size() >= 2 && out[1] == v.special().bos) {
        spdlog::warn("the prompt starts with a BOS token and another was added: it now starts with two");
    }
    if (add_special && wpm) out.push_back(impl_->required(v.special().sep, "SEP", "tokenizer.ggml.add_sep_token"));
    if (add_special && !wpm && v.add_eos()) out.push_back(impl_->required(v.special().eos, "EOS", "tokenizer.ggml.add_eos_token"));
    return out;
}

const std::string& Tokenizer::token_to_piece(TokenId id) const {
    impl_->vocab.token(id);  // range check
    return impl_->pieces[static_cast<size_t>(id)];
}

std::string Tokenizer::token_to_piece(TokenId id, bool special) const {
    const TokenData& t = impl_->vocab.token(id);
    if (!special && (t.attr & (kTokenUnknown | kTokenControl))) return {};
    return impl_->pieces[static_cast<size_t>(id)];
}

std::string Tokenizer::detokenize(std::span<const TokenId> ids, bool remove_special, bool unparse_special) const {
    return join_pieces(impl_->vocab, ids, remove_special, impl_->pieces, unparse_special);
}

}  // namespace pocket
