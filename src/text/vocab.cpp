#include "pocket/vocab.hpp"

#include "pocket/error.hpp"
#include "pocket/gguf.hpp"
#include "text/pre_tokenizer_rules.hpp"
#include "text/vocab_data.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace pocket {

namespace {

// GGUF token types (tokenizer.ggml.token_type) as llama.cpp numbers them.
uint32_t attr_from_token_type(int32_t type) {
    switch (type) {
        case 1: return kTokenNormal;
        case 2: return kTokenUnknown;
        case 3: return kTokenControl;
        case 4: return kTokenUserDefined;
        case 5: return kTokenUnused;
        case 6: return kTokenByte;
        default: return kTokenUndefined;
    }
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> parts) {
    return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return s.find(p) != std::string_view::npos; });
}

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> set) {
    return std::find(set.begin(), set.end(), s) != set.end();
}

void read_tokens(Vocab::Data& d, const GgufFile& file) {
    const auto texts = file.get_strings("tokenizer.ggml.tokens");
    const size_t n = texts.size();

    // Scores are f32, or i32 in some converted files; both optional.
    std::span<const float> scores_f;
    std::span<const int32_t> scores_i;
    if (const GgufValue* s = file.find("tokenizer.ggml.scores")) {
        scores_f = s->array<float>();
        scores_i = s->array<int32_t>();
        if (scores_f.empty() && scores_i.empty() && s->count() > 0) {
            throw Error("{}: metadata key 'tokenizer.ggml.scores' is not an array of f32 or i32", file.path());
        }
        if (s->count() < n) throw Error("{}: tokenizer.ggml.scores has {} entries for {} tokens", file.path(), s->count(), n);
    }
    std::span<const int32_t> types;
    if (file.find("tokenizer.ggml.token_type")) {
        types = file.get_array<int32_t>("tokenizer.ggml.token_type");
        if (types.size() < n) throw Error("{}: tokenizer.ggml.token_type has {} entries for {} tokens", file.path(), types.size(), n);
    }

    d.tokens.resize(n);
    d.by_text.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        TokenData& t = d.tokens[i];
        t.text = std::string(texts[i]);
        if (t.text.empty()) {
            spdlog::warn("{}: empty token at index {}", file.path(), i);
            t.text = "[EMPTY_" + std::to_string(i) + "]";
        }
        t.score = !scores_f.empty() ? scores_f[i] : !scores_i.empty() ? static_cast<float>(scores_i[i]) : 0.0f;
        t.attr = types.empty() ? kTokenNormal : attr_from_token_type(types[i]);
        d.max_token_bytes = std::max(d.max_token_bytes, t.text.size());
        d.by_text.insert_or_assign(t.text, static_cast<TokenId>(i));  // the last of duplicates wins, as in llama.cpp
    }
}

void read_merges(Vocab::Data& d, const GgufFile& file) {
    const auto list = file.get_strings("tokenizer.ggml.merges");
    d.merge_ranks.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
        // The pair splits at the first space after the first byte; a line without one is the
        // empty pair, as in llama.cpp. The first rank of a duplicate stays.
        const std::string_view m = list[i];
        const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string_view::npos;
        std::string key = space == std::string_view::npos ? std::string(" ") : std::string(m);
        d.merge_ranks.try_emplace(std::move(key), static_cast<int>(i));
    }
}

void read_special_ids(Vocab::Data& d, const GgufFile& file) {
    const std::pair<std::string_view, TokenId*> keys[] = {
        {"tokenizer.ggml.bos_token_id", &d.special.bos},
        {"tokenizer.ggml.eos_token_id", &d.special.eos},
        {"tokenizer.ggml.eot_token_id", &d.special.eot},
        {"tokenizer.ggml.eom_token_id", &d.special.eom},
        {"tokenizer.ggml.unknown_token_id", &d.special.unk},
        {"tokenizer.ggml.seperator_token_id", &d.special.sep},  // sic: the GGUF key is spelt so
        {"tokenizer.ggml.padding_token_id", &d.special.pad},
        {"tokenizer.ggml.mask_token_id", &d.special.mask},
        {"tokenizer.ggml.fim_pre_token_id", &d.special.fim_pre},
        {"tokenizer.ggml.fim_suf_token_id", &d.special.fim_suf},
        {"tokenizer.ggml.fim_mid_token_id", &d.special.fim_mid},
        {"tokenizer.ggml.fim_pad_token_id", &d.special.fim_pad},
        {"tokenizer.ggml.fim_rep_token_id", &d.special.fim_rep},
        {"tokenizer.ggml.fim_sep_token_id", &d.special.fim_sep},
        {"tokenizer.ggml.prefix_token_id", &d.special.fim_pre},  // deprecated names
        {"tokenizer.ggml.suffix_token_id", &d.special.fim_suf},
        {"tokenizer.ggml.middle_token_id", &d.special.fim_mid},
    };
    const auto n = static_cast<int64_t>(d.tokens.size());
    for (auto [key, id] : keys) {
        if (*id >= n) {
            spdlog::warn("{}: default special token {} = {} out of vocab range, disabling", file.path(), key, *id);
            *id = kNoToken;
        }
        const auto value = file.find_as<int64_t>(key);
        if (!value) continue;
        if (*value < 0 || *value >= n) {
            spdlog::warn("{}: bad special token {} = {}, using default id {}", file.path(), key, *value, *id);
        } else {
            *id = static_cast<TokenId>(*value);
        }
    }
}

// llama.cpp finds some special tokens by their text and forces them to CONTROL; the same here,
// so that text and generation end the same way.
void detect_special_by_text(Vocab::Data& d, const GgufFile& file) {
    struct Rule {
        TokenId* id;
        std::initializer_list<std::string_view> texts;
    };
    const Rule rules[] = {
        {&d.special.eot, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
                          "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>"}},
        {&d.special.eom, {"<|eom_id|>"}},
        {&d.special.fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
                              "<|code_prefix|>", "<|prefix|>"}},
        {&d.special.fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
                              "<|code_suffix|>", "<|suffix|>"}},
        {&d.special.fim_mid, {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
                              "<|code_middle|>", "<|middle|>"}},
        {&d.special.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
        {&d.special.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
        {&d.special.fim_sep, {"<|file_sep|>"}},
    };
    auto force_control = [&](TokenId id) {
        uint32_t& attr = d.tokens[id].attr;
        if ((attr & kTokenControl) == 0) {
            spdlog::warn("{}: control-looking token {} '{}' was not control-type; overriding", file.path(), id, d.tokens[id].text);
            attr |= kTokenControl;
        }
    };
    for (TokenId id = 0; id < static_cast<TokenId>(d.tokens.size()); ++id) {
        const std::string& text = d.tokens[id].text;
        for (const Rule& r : rules) {
            if (*r.id == kNoToken && is_one_of(text, r.texts)) {
                *r.id = id;
                force_control(id);
            }
        }
    }

    // Control tokens named "unused" are unused.
    for (auto& t : d.tokens) {
        if ((t.attr & kTokenControl) && t.text.find("unused") != std::string::npos) t.attr |= kTokenUnused;
    }

    // End-of-generation tokens.
    std::vector<TokenId> eog;
    for (TokenId id : {d.special.fim_pad, d.special.fim_rep, d.special.fim_sep}) {
        if (id != kNoToken) eog.push_back(id);
    }
    for (TokenId id = 0; id < static_cast<TokenId>(d.tokens.size()); ++id) {
        const std::string& text = d.tokens[id].text;
        if (is_one_of(text, {"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
                             "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
                             "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
                             "<｜end▁of▁sentence｜>", "[e~["})) {
            eog.push_back(id);
            force_control(id);
        }
        // gpt-oss: these always render.
        if (is_one_of(text, {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})) {
            d.tokens[id].attr = kTokenUserDefined;
        }
    }
    for (TokenId id : {d.special.eos, d.special.eot, d.special.eom}) {
        if (id != kNoToken) eog.push_back(id);
    }
    std::sort(eog.begin(), eog.end());
    eog.erase(std::unique(eog.begin(), eog.end()), eog.end());

    auto find_eog = [&](std::initializer_list<std::string_view> texts) -> TokenId {
        for (TokenId id : eog) {
            if (is_one_of(d.tokens[id].text, texts)) return id;
        }
        return kNoToken;
    };
    auto drop_eog = [&](TokenId id, uint32_t attr) {
        eog.erase(std::find(eog.begin(), eog.end(), id));
        d.tokens[id].attr = attr;
    };
    // o200k_harmony / solar-open: "<|end|>" does not end generation there.
    const TokenId end = find_eog({"<|end|>"});
    const bool has_return = find_eog({"<|return|>"}) != kNoToken;
    const bool has_call = find_eog({"<|call|>", "<|calls|>"}) != kNoToken;
    const bool has_flush = find_eog({"<|flush|>"}) != kNoToken;
    if (end != kNoToken && has_call && (has_return || has_flush)) drop_eog(end, kTokenUserDefined);
    // gemma4 / paddleocr: "</s>" is not an EOG token there.
    const TokenId s = find_eog({"</s>"});
    if (s != kNoToken && find_eog({"<|tool_response>"}) != kNoToken) drop_eog(s, kTokenNormal);

    d.eog = std::move(eog);
}

// Strip flags that llama.cpp sets by model name (they are not stored in GGUF).
void set_strip_attrs(Vocab::Data& d) {
    auto set = [&](std::string_view text, uint32_t flag, bool on) {
        auto it = d.by_text.find(text);
        if (it == d.by_text.end()) return;
        uint32_t& attr = d.tokens[it->second].attr;
        attr = on ? (attr | flag) : (attr & ~flag);
    };
    std::string name = d.name;
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (contains_any(d.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
        contains_any(d.architecture, {"nomic-bert-moe", "jina-bert-v3"})) {
        set("<mask>", kTokenLStrip, true);
    } else if (contains_any(name, {"phi-3", "phi3"})) {
        for (TokenId id : d.special_longest_first) d.tokens[id].attr |= kTokenRStrip;
        set("</s>", kTokenRStrip, true);
        for (auto t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, kTokenRStrip, false);
    } else if (contains_any(name, {"modern-bert"})) {
        set("[MASK]", kTokenLStrip, true);
    }
}

}  // namespace

Vocab Vocab::from_gguf(const GgufFile& file) {
    auto d = std::make_unique<Data>();
    d->source = file.path();
    d->name = file.find_as<std::string>("general.name").value_or("");
    d->architecture = file.find_as<std::string>("general.architecture").value_or("");
    d->model = file.get<std::string>("tokenizer.ggml.model");
    d->pre = file.find_as<std::string>("tokenizer.ggml.pre").value_or("");

    SpecialTokenIds& sp = d->special;
    if (d->model == "llama") {
        d->type = VocabType::Spm;
        sp.bos = 1, sp.eos = 2, sp.unk = 0;
        d->add_space_prefix = true;
        d->add_bos = true;
        if (d->pre.empty()) d->pre = "default";
    } else if (d->model == "bert") {
        d->type = VocabType::Wpm;
        sp.bos = 101, sp.unk = 100, sp.sep = 102, sp.pad = 0, sp.mask = 103;
        d->add_bos = true;
        d->add_sep = true;
        d->clean_spaces = true;
        if (d->pre.empty()) d->pre = "default";
    } else if (d->model == "gpt2") {
        d->type = VocabType::Bpe;
        sp.bos = 11, sp.eos = 11;
        if (d->pre.empty()) {
            spdlog::warn("{}: tokenizer.ggml.pre is missing, using the 'default' pre-tokenizer; "
                         "tokenization may differ from the model's own", file.path());
            d->pre = "default";
        }
        const PreTokenizerRule rule = pre_tokenizer_rule(d->pre);
        d->ignore_merges = rule.ignore_merges;
        d->add_bos = rule.add_bos;
        d->add_sep = rule.add_sep;
        d->clean_spaces = rule.clean_spaces;
        if (rule.no_bos_token) sp.bos = kNoToken;
        if (d->pre == "whitespace") d->lowercase = false;
    } else if (d->model == "no_vocab" || d->model == "none") {
        throw Error("{}: the model has no vocabulary (tokenizer.ggml.model = '{}')", file.path(), d->model);
    } else {
        throw Error("{}: unsupported tokenizer model '{}' (tokenizer.ggml.model)", file.path(), d->model);
    }
    if (auto v = file.find_as<bool>("tokenizer.ggml.add_space_prefix")) d->add_space_prefix = *v;

    read_tokens(*d, file);
    if (d->type == VocabType::Bpe) read_merges(*d, file);
    read_special_ids(*d, file);

    if (auto v = file.find_as<bool>("tokenizer.ggml.add_bos_token")) d->add_bos = *v;
    if (auto v = file.find_as<bool>("tokenizer.ggml.add_eos_token")) d->add_eos = *v;
    if (auto v = file.find_as<bool>("tokenizer.ggml.add_sep_token")) d->add_sep = *v;
    if (auto v = file.find_as<bool>("tokenizer.ggml.normalizer.lowercase")) d->lowercase = *v;
    d->strip_accents = d->lowercase;
    if (auto v = file.find_as<bool>("tokenizer.ggml.normalizer.strip_accents")) d->strip_accents = *v;

    detect_special_by_text(*d, file);

    for (TokenId id = 0; id < static_cast<TokenId>(d->tokens.size()); ++id) {
        if (d->tokens[id].attr & (kTokenControl | kTokenUserDefined | kTokenUnknown)) d->special_longest_first.push_back(id);
    }
    std::stable_sort(d->special_longest_first.begin(), d->special_longest_first.end(),
                     [&](TokenId a, TokenId b) { return d->tokens[a].text.size() > d->tokens[b].text.size(); });
    set_strip_attrs(*d);

    spdlog::debug("{}: vocab {} ({}), {} tokens, {} merges, pre '{}'", file.path(), d->model,
                  d->type == VocabType::Spm ? "SPM" : d->type == VocabType::Bpe ? "BPE" : "WPM", d->tokens.size(),
                  d->merge_ranks.size(), d->pre);
    return Vocab(std::move(d));
}

Vocab::Vocab(std::unique_ptr<Data> data) : d_(std::move(data)) {}
Vocab::Vocab(Vocab&&) noexcept = default;
Vocab& Vocab::operator=(Vocab&&) noexcept = default;
Vocab::~Vocab() = default;

VocabType Vocab::type() const { return d_->type; }
std::string_view Vocab::model() const { return d_->model; }
std::string_view Vocab::pre() const { return d_->pre; }
std::string_view Vocab::name() const { return d_->name; }
const std::string& Vocab::source() const { return d_->source; }
size_t Vocab::size() const { return d_->tokens.size(); }
size_t Vocab::max_token_bytes() const { return d_->max_token_bytes; }

const TokenData& Vocab::token(TokenId id) const {
    if (id < 0 || static_cast<size_t>(id) >= d_->tokens.size()) {
        throw Error("token id {} is out of range (vocabulary of {} tokens)", id, d_->tokens.size());
    }
    return d_->tokens[static_cast<size_t>(id)];
}

TokenId Vocab::find(std::string_view text) const {
    auto it = d_->by_text.find(text);
    return it == d_->by_text.end() ? kNoToken : it->second;
}

int Vocab::merge_rank(std::string_view left, std::string_view right) const {
    std::string key;
    key.reserve(left.size() + 1 + right.size());
    key.append(left).append(1, ' ').append(right);
    auto it = d_->merge_ranks.find(key);
    return it == d_->merge_ranks.end() ? -1 : it->second;
}

const SpecialTokenIds& Vocab::special() const { return d_->special; }
bool Vocab::is_eog(TokenId id) const { return std::binary_search(d_->eog.begin(), d_->eog.end(), id); }
bool Vocab::is_control(TokenId id) const { return (token(id).attr & kTokenControl) != 0; }
std::span<const TokenId> Vocab::eog_tokens() const { return d_->eog; }
bool Vocab::add_bos() const { return d_->add_bos; }
bool Vocab::add_eos() const { return d_->add_eos; }
bool Vocab::add_sep() const { return d_->add_sep; }
bool Vocab::add_space_prefix() const { return d_->add_space_prefix; }
bool Vocab::ignore_merges() const { return d_->ignore_merges; }
bool Vocab::clean_spaces() const { return d_->clean_spaces; }
bool Vocab::lowercase() const { return d_->lowercase; }
bool Vocab::strip_accents() const { return d_->strip_accents; }
std::span<const TokenId> Vocab::special_tokens_longest_first() const { return d_->special_longest_first; }

}  // namespace pocket
