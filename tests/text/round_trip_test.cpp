// Property: the pieces of a text's tokens give the text back, byte for byte, for random
// mixes of scripts, emoji, digits, whitespace and special-token look-alikes; and arbitrary
// bytes (invalid UTF-8 included) never break the tokenizer.
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <random>

namespace {

std::string random_text(std::mt19937& rng) {
    static const char* const kParts[] = {
        "a", "Z", "the", " ", "  ", "\n", "\t", "\r\n", "7", "42", "3.14", "'s", "'LL", "!", "...", "<s>", "</s>",
        "<|endoftext|>", "<think>", "é", "e\u0301", "ß", "Ж", "ж", "中", "文字", "カ", "한", "ก", "ม", "ی", "ह",
        "🦙", "😶\u200d🌫️", "🇺🇸", "\u00a0", "\u3000", "\u2028", "\u0085", "½", "²", "™", "\U00031350", "∀",
    };
    std::uniform_int_distribution<size_t> part(0, std::size(kParts) - 1), len(0, 24);
    std::string s;
    for (size_t i = 0, n = len(rng); i < n; ++i) s += kParts[part(rng)];
    return s;
}

TEST(RoundTrip, PiecesGiveTheTextBack) {
    POCKET_REQUIRE_SHARED(shared);
    for (const char* name : {"llama-spm", "phi-3", "gpt-2", "mpt", "refact", "starcoder", "deepseek-coder", "llama3", "qwen3"}) {
        const auto tok = pocket::Tokenizer::from_file((shared / "vocab" / (std::string("ggml-vocab-") + name + ".gguf")).string());
        const bool spm = tok.vocab().type() == pocket::VocabType::Spm;
        std::mt19937 rng(7);
        for (int i = 0; i < 300; ++i) {
            const std::string text = random_text(rng);
            std::string joined;
            for (auto id : tok.tokenize(text, false, false)) joined += tok.token_to_piece(id);
            // SPM puts a space first (add_space_prefix) unless the text is empty.
            const std::string expected = spm && !text.empty() ? " " + text : text;
            ASSERT_EQ(joined, expected) << name << " case " << i;
        }
    }
}

TEST(RoundTrip, ArbitraryBytesAreTokenized) {
    POCKET_REQUIRE_SHARED(shared);
    for (const char* name : {"llama-spm", "bert-bge", "gpt-2", "deepseek-coder", "llama3", "qwen3"}) {
        const auto tok = pocket::Tokenizer::from_file((shared / "vocab" / (std::string("ggml-vocab-") + name + ".gguf")).string());
        std::mt19937 rng(11);
        std::uniform_int_distribution<int> byte(0, 255), len(0, 64);
        for (int i = 0; i < 300; ++i) {
            std::string text;
            for (int k = 0, n = len(rng); k < n; ++k) text += static_cast<char>(byte(rng));
            const auto ids = tok.tokenize(text, true, true);
            for (auto id : ids) {
                ASSERT_GE(id, 0) << name;
                ASSERT_LT(static_cast<size_t>(id), tok.vocab().size()) << name;
            }
            (void)tok.detokenize(ids, false, true);
        }
    }
}

}  // namespace
