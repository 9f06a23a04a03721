// Small vocabularies written here with GgufWriter: loading rules and errors, and the SPM/BPE
// algorithms on cases small enough to follow by hand. Needs no shared data.
#include "pocket/error.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/tokenizer.hpp"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>

namespace {

using Ids = std::vector<pocket::TokenId>;

struct TempFile {
    std::filesystem::path path;
    explicit TempFile(const std::string& name)
        : path(std::filesystem::temp_directory_path() / fmt::format("pocket-text-{}-{}.gguf", name, ::getpid())) {}
    ~TempFile() { std::filesystem::remove(path); }
};

struct VocabSpec {
    std::string model = "llama";
    std::optional<std::string> pre;
    std::vector<std::string> tokens;
    std::vector<float> scores;
    std::vector<int32_t> types;
    std::vector<std::string> merges;
    bool write_tokens = true;
    std::function<void(pocket::GgufWriter&)> extra;  // more keys
};

void write_vocab(const std::filesystem::path& path, const VocabSpec& v) {
    pocket::GgufWriter w(path.string());
    w.set_string("general.architecture", "made-up-arch");
    w.set_string("tokenizer.ggml.model", v.model);
    if (v.pre) w.set_string("tokenizer.ggml.pre", *v.pre);
    if (v.write_tokens) w.set_strings("tokenizer.ggml.tokens", std::span<const std::string>(v.tokens));
    if (!v.scores.empty()) w.set_array<float>("tokenizer.ggml.scores", v.scores);
    if (!v.types.empty()) w.set_array<int32_t>("tokenizer.ggml.token_type", v.types);
    if (!v.merges.empty()) w.set_strings("tokenizer.ggml.merges", std::span<const std::string>(v.merges));
    if (v.extra) v.extra(w);
    w.begin();
    w.finish();
}

// <unk> <s> </s>, the 256 byte tokens, then `extra` with their scores.
VocabSpec spm_spec(const std::vector<std::pair<std::string, float>>& extra) {
    VocabSpec v;
    v.tokens = {"<unk>", "<s>", "</s>"};
    v.types = {2, 3, 3};
    for (int b = 0; b < 256; ++b) {
        v.tokens.push_back(fmt::format("<0x{:02X}>", b));
        v.types.push_back(6);
    }
    v.scores.assign(v.tokens.size(), 0.0f);
    for (const auto& [text, score] : extra) {
        v.tokens.push_back(text);
        v.scores.push_back(score);
        v.types.push_back(1);
    }
    return v;
}

TEST(SyntheticVocab, SpmMergesByScoreAndFallsBackToBytes) {
    TempFile f("spm");
    // "▁ab" can form as ▁a+b or ▁+ab; the scores decide the path, the result is one token.
    write_vocab(f.path, spm_spec({{"\xE2\x96\x81", -1}, {"a", -2}, {"b", -3}, {"ab", -4}, {"\xE2\x96\x81" "a", -5},
                                  {"\xE2\x96\x81" "ab", -6}}));
    const auto tok = pocket::Tokenizer::from_file(f.path.string());
    const pocket::TokenId base = 259;  // first extra token
    EXPECT_EQ(tok.tokenize("ab", false), (Ids{base + 5}));
    EXPECT_EQ(tok.tokenize("ab", true), (Ids{1, base + 5}));  // SPM: BOS on by default
    // "é" has no token: its two UTF-8 bytes come out as <0xC3> <0xA9>.
    EXPECT_EQ(tok.tokenize("é", false), (Ids{base + 0, 3 + 0xC3, 3 + 0xA9}));
    EXPECT_EQ(tok.detokenize(tok.tokenize("ab é", false)), "ab é");
}

TEST(SyntheticVocab, SpmPrefersHigherScores) {
    TempFile f("spm2");
    // "abc": "ab" (score -1) merges before "bc" (score -2), then nothing joins "ab"+"c".
    write_vocab(f.path, spm_spec({{"a", -9}, {"b", -9}, {"c", -9}, {"ab", -1}, {"bc", -2}}));
    const auto tok = pocket::Tokenizer::from_file(f.path.string());
    const pocket::TokenId base = 259;
    // No "▁" token here: the prefix space falls back to the bytes of U+2581 first.
    const auto ids = tok.tokenize("abc", false);
    ASSERT_GE(ids.size(), 2u);
    EXPECT_EQ(ids[ids.size() - 2], base + 3);
    EXPECT_EQ(ids.back(), base + 2);
}

TEST(SyntheticVocab, BpeWithoutPreWarnsAndUsesDefault) {
    TempFile f("bpe");
    VocabSpec v;
    v.model = "gpt2";
    // Byte-level alphabet: 'Ġ' (U+0120) stands for the space byte.
    v.tokens = {"a", "b", "\xC4\xA0", "ab", "\xC4\xA0" "ab", "<|endoftext|>"};
    v.types = {1, 1, 1, 1, 1, 3};
    v.merges = {"a b", "\xC4\xA0 ab"};
    write_vocab(f.path, v);

    auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    auto previous = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
    const auto tok = pocket::Tokenizer::from_file(f.path.string());
    spdlog::set_default_logger(previous);

    bool warned = false;
    for (const auto& line : sink->last_formatted()) warned |= line.find("'default'") != std::string::npos;
    EXPECT_TRUE(warned) << "no warning naming the fallback pre-tokenizer";
    EXPECT_EQ(tok.vocab().pre(), "default");
    EXPECT_FALSE(tok.vocab().add_bos());
    EXPECT_EQ(tok.tokenize("ab ab", true), (Ids{3, 4}));
    EXPECT_EQ(tok.detokenize(Ids{3, 4}), "ab ab");
    // <|endoftext|> is CONTROL and an EOG token by its text.
    EXPECT_TRUE(tok.vocab().is_eog(5));
    EXPECT_EQ(tok.tokenize("<|endoftext|>", false, true), (Ids{5}));
}

TEST(SyntheticVocab, ErrorsNameFileAndKey) {
    {
        TempFile f("notokens");
        VocabSpec v;
        v.write_tokens = false;
        write_vocab(f.path, v);
        try {
            (void)pocket::Tokenizer::from_file(f.path.string());
            FAIL() << "no error";
        } catch (const pocket::Error& e) {
            const std::string msg = e.what();
            EXPECT_NE(msg.find(f.path.string()), std::string::npos) << msg;
            EXPECT_NE(msg.find("tokenizer.ggml.tokens"), std::string::npos) << msg;
        }
    }
    {
        TempFile f("badmodel");
        VocabSpec v;
        v.model = "klingon";
        v.tokens = {"a"};
        write_vocab(f.path, v);
        EXPECT_THROW((void)pocket::Tokenizer::from_file(f.path.string()), pocket::Error);
    }
    {
        TempFile f("badpre");
        VocabSpec v;
        v.model = "gpt2";
        v.pre = "no-such-pre";
        v.tokens = {"a"};
        v.merges = {"a a"};
        write_vocab(f.path, v);
        try {
            (void)pocket::Tokenizer::from_file(f.path.string());
            FAIL() << "no error";
        } catch (const pocket::Error& e) {
            EXPECT_NE(std::string(e.what()).find("no-such-pre"), std::string::npos) << e.what();
        }
    }
}

// A pre-tokenizer whose models have no BOS token (chatglm-bpe) with metadata that asks for one
// anyway: adding special tokens must fail naming the file, the key and the way around it,
// never push an invalid id into the prompt.
TEST(SyntheticVocab, AddBosWithoutABosTokenIsAnErrorNamingTheFile) {
    TempFile f("nobos");
    VocabSpec v;
    v.model = "gpt2";
    v.pre = "chatglm-bpe";
    v.tokens = {"a", "b", "ab"};
    v.types = {1, 1, 1};
    v.merges = {"a b"};
    v.extra = [](pocket::GgufWriter& w) { w.set<bool>("tokenizer.ggml.add_bos_token", true); };
    write_vocab(f.path, v);
    const auto tok = pocket::Tokenizer::from_file(f.path.string());
    EXPECT_EQ(tok.tokenize("ab", false), (Ids{2}));
    try {
        (void)tok.tokenize("ab", true);
        FAIL() << "no error";
    } catch (const pocket::Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(f.path.string()), std::string::npos) << msg;
        EXPECT_NE(msg.find("no BOS token"), std::string::npos) << msg;
        EXPECT_NE(msg.find("--override-kv tokenizer.ggml.add_bos_token=bool:false"), std::string::npos) << msg;
    }
}

TEST(SyntheticVocab, BadSpecialIdsKeepTheDefaultAndBadTypesAreErrors) {
    {
        TempFile f("badbos");
        auto v = spm_spec({{"a", -1}});
        v.extra = [](pocket::GgufWriter& w) {
            w.set<uint32_t>("tokenizer.ggml.bos_token_id", 999999);  // out of range: warned, default kept
            w.set<uint32_t>("tokenizer.ggml.eos_token_id", 2);
        };
        write_vocab(f.path, v);
        const auto tok = pocket::Tokenizer::from_file(f.path.string());
        EXPECT_EQ(tok.vocab().special().bos, 1);
        EXPECT_TRUE(tok.vocab().is_eog(2));
    }
    {
        TempFile f("badtype");
        auto v = spm_spec({{"a", -1}});
        v.extra = [](pocket::GgufWriter& w) { w.set<uint32_t>("tokenizer.ggml.add_bos_token", 1); };
        write_vocab(f.path, v);
        try {
            (void)pocket::Tokenizer::from_file(f.path.string());
            FAIL() << "no error";
        } catch (const pocket::Error& e) {
            EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.add_bos_token"), std::string::npos) << e.what();
        }
    }
    {
        TempFile f("shorttypes");
        auto v = spm_spec({{"a", -1}});
        v.types.pop_back();
        write_vocab(f.path, v);
        EXPECT_THROW((void)pocket::Tokenizer::from_file(f.path.string()), pocket::Error);
    }
}

TEST(SyntheticVocab, AddSpacePrefixCanBeTurnedOff) {
    TempFile f("noprefix");
    auto v = spm_spec({{"\xE2\x96\x81", -1}, {"a", -2}, {"\xE2\x96\x81" "a", -3}});
    v.extra = [](pocket::GgufWriter& w) { w.set<bool>("tokenizer.ggml.add_space_prefix", false); };
    write_vocab(f.path, v);
    const auto tok = pocket::Tokenizer::from_file(f.path.string());
    const pocket::TokenId base = 259;
    EXPECT_EQ(tok.tokenize("a a", false), (Ids{base + 1, base + 2}));
    EXPECT_EQ(tok.detokenize(Ids{base + 1, base + 2}), "a a");
}

}  // namespace
