// Token ids back to text, and the streaming decoder's UTF-8 guarantee.
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

namespace {

pocket::Tokenizer load(const std::filesystem::path& shared, const char* name) {
    return pocket::Tokenizer::from_file((shared / "vocab" / (std::string("ggml-vocab-") + name + ".gguf")).string());
}

bool is_valid_utf8(const std::string& s) {
    for (size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        for (size_t k = 1; k < n; ++k) {
            if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
        }
        i += n;
    }
    return true;
}

const char* const kTexts[] = {
    "Hello world", " this is 🦙.cpp", "нещо на Български", "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～",
    "    Hello\n    Hello", "🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅",
};

TEST(Detokenizer, RoundTripsSpmAndByteLevelBpe) {
    POCKET_REQUIRE_SHARED(shared);
    for (const char* name : {"llama-spm", "llama3", "qwen3", "gpt-2"}) {
        const auto tok = load(shared, name);
        for (const char* text : kTexts) {
            const auto ids = tok.tokenize(text, false);
            std::string joined;
            for (auto id : ids) joined += tok.token_to_piece(id);
            if (tok.vocab().type() == pocket::VocabType::Spm) {
                EXPECT_EQ(joined, std::string(" ") + text) << name;  // the SPM prefix space
                EXPECT_EQ(tok.detokenize(ids), text) << name;
            } else {
                EXPECT_EQ(joined, text) << name;
            }
        }
    }
}

TEST(Detokenizer, RemovesBosAndHidesControlTokens) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "llama-spm");
    const auto ids = tok.tokenize("Hello world", true);
    // llama.cpp keeps the prefix space when it removes a leading BOS (llama_detokenize).
    EXPECT_EQ(tok.detokenize(ids, /*remove_special=*/true), " Hello world");
    EXPECT_EQ(tok.detokenize(tok.tokenize("Hello world", false)), "Hello world");
    EXPECT_EQ(tok.detokenize(ids, false, /*unparse_special=*/true), "<s> Hello world");
    EXPECT_EQ(tok.token_to_piece(1, false), "");
    EXPECT_EQ(tok.token_to_piece(1, true), "<s>");
    EXPECT_EQ(tok.token_to_piece(13), "\n");  // <0x0A>
}

TEST(Detokenizer, CleansSpacesForGpt2) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "gpt-2");
    const auto ids = tok.tokenize("Hello , world !", false);
    EXPECT_EQ(tok.detokenize(ids), "Hello, world!");
}

TEST(StreamDecoder, EmitsOnlyCompleteUtf8) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "llama-spm");
    // Emoji and CJK fall back to byte tokens in the Llama-2 vocabulary.
    const std::string text = "🦙 and 我想 and 😶‍🌫️";
    const auto ids = tok.tokenize(text, false);
    pocket::TokenStreamDecoder dec(tok);
    std::string all;
    for (auto id : ids) {
        const std::string part = dec.push(id);
        EXPECT_TRUE(is_valid_utf8(part)) << "token " << id;
        all += part;
    }
    all += dec.finish();
    EXPECT_EQ(all, " " + text);
}

TEST(StreamDecoder, ReplacesBytesThatNeverComplete) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = load(shared, "llama-spm");
    pocket::TokenStreamDecoder dec(tok);
    // <0xF0> then "a": the lead byte can never be completed.
    const pocket::TokenId lead = tok.vocab().find("<0xF0>");
    ASSERT_NE(lead, pocket::kNoToken);
    std::string out = dec.push(lead);
    EXPECT_EQ(out, "");
    out += dec.push(tok.vocab().find("a"));
    out += dec.finish();
    EXPECT_EQ(out, "\xEF\xBF\xBD" "a");
}

}  // namespace
