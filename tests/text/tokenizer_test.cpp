// BOS/EOS rules, special-token parsing and loading rules, on the shared vocab-only files.
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

namespace {

pocket::Tokenizer load(const std::filesystem::path& shared, const char* name) {
    return pocket::Tokenizer::from_file((shared / "vocab" / (std::string("ggml-vocab-") + name + ".gguf")).string());
}

using Ids = std::vector<pocket::TokenId>;

TEST(Tokenizer, SpmAddsBosAndPrefixSpace) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "llama-spm");
    EXPECT_EQ(tok.vocab().type(), pocket::VocabType::Spm);
    EXPECT_TRUE(tok.vocab().add_bos());
    EXPECT_EQ(tok.tokenize("Hello world", true), (Ids{1, 15043, 3186}));
    EXPECT_EQ(tok.tokenize("Hello world", false), (Ids{15043, 3186}));
    EXPECT_EQ(tok.tokenize("", true), (Ids{1}));
    EXPECT_TRUE(tok.tokenize("", false).empty());
}

TEST(Tokenizer, SpmParsesControlTokensOnlyWhenAsked) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "llama-spm");
    const auto parsed = tok.tokenize("<s>Hi</s>", false, true);
    ASSERT_GE(parsed.size(), 3u);
    EXPECT_EQ(parsed.front(), 1);
    EXPECT_EQ(parsed.back(), 2);
    const auto plain = tok.tokenize("<s>Hi</s>", false, false);
    EXPECT_NE(plain.front(), 1);
}

TEST(Tokenizer, BosDefaultsFollowLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    // llama3: no add_bos_token key, pre llama-bpe turns it on.
    const auto llama3 = load(shared, "llama3");
    EXPECT_TRUE(llama3.vocab().add_bos());
    EXPECT_EQ(llama3.tokenize("Hello", true).front(), 128000);
    // qwen3: add_bos_token = false.
    const auto qwen3 = load(shared, "qwen3");
    EXPECT_FALSE(qwen3.vocab().add_bos());
    EXPECT_EQ(qwen3.tokenize("Hello", true), qwen3.tokenize("Hello", false));
    // gpt-2: no key, most BPE pre-tokenizers leave it off.
    EXPECT_FALSE(load(shared, "gpt-2").vocab().add_bos());
    // bert: CLS ... SEP.
    const auto bert = load(shared, "bert-bge");
    const auto ids = bert.tokenize("hello", true);
    ASSERT_GE(ids.size(), 3u);
    EXPECT_EQ(ids.front(), 101);
    EXPECT_EQ(ids.back(), 102);
}

TEST(Tokenizer, ControlTextParsedLikeHf) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "llama3");
    // hf-disagreements.json: with parse_special, llama.cpp equals HF.
    EXPECT_EQ(tok.tokenize("<|begin_of_text|>Hello<|eot_id|>", false, true), (Ids{128000, 9906, 128009}));
    EXPECT_TRUE(tok.vocab().is_eog(128009));
    EXPECT_TRUE(tok.vocab().is_eog(128001));
}

TEST(Tokenizer, QwenUserDefinedTokensAlwaysMatch) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "qwen3");
    const pocket::TokenId think = tok.vocab().find("<think>");
    ASSERT_NE(think, pocket::kNoToken);
    EXPECT_EQ(tok.tokenize("<think>", false, false), (Ids{think}));
    EXPECT_TRUE(tok.vocab().is_eog(151645));  // <|im_end|>
}

TEST(Tokenizer, MissingFileNamesIt) {
    try {
        (void)pocket::Tokenizer::from_file("/nonexistent/vocab.gguf");
        FAIL() << "no error";
    } catch (const pocket::Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/vocab.gguf"), std::string::npos) << e.what();
    }
}

}  // namespace
