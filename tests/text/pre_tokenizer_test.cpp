// The pre-tokenizer on characters where PCRE2's Unicode tables and llama.cpp's differ.
#include "text/pre_tokenizer.hpp"
#include "text/pre_tokenizer_rules.hpp"

#include <gtest/gtest.h>

namespace {

using Words = std::vector<std::string>;

pocket::PreTokenizer llama3() { return pocket::PreTokenizer(pocket::pre_tokenizer_rule("llama-bpe").patterns); }

TEST(PreTokenizer, SplitsLikeLlama3) {
    EXPECT_EQ(llama3().split("Hello world's 12345!!\n\n  x"),
              (Words{"Hello", " world", "'s", " ", "123", "45", "!!\n\n", " ", " x"}));
}

TEST(PreTokenizer, NewerLettersAreLetters) {
    // U+31350 (CJK Extension H, Unicode 15) is unassigned for PCRE2 10.42 but a letter for llama.cpp.
    EXPECT_EQ(llama3().split("a\U00031350b c"), (Words{"a\U00031350b", " c"}));
    // U+11F04 (Kawi, Unicode 15) likewise.
    EXPECT_EQ(llama3().split("x\U00011F04"), (Words{"x\U00011F04"}));
}

TEST(PreTokenizer, MongolianVowelSeparatorIsNotWhitespace) {
    // PCRE2's \s matches U+180E; llama.cpp's whitespace table does not.
    EXPECT_EQ(llama3().split("a\u180E\u180Eb"), (Words{"a", "\u180E\u180E", "b"}));
}

TEST(PreTokenizer, LiteralRangesSeeTheRealCodePoint) {
    // deepseek-coder's CJK range covers U+0800..U+4E00, which holds U+0CF3 (a Unicode 15 mark).
    pocket::PreTokenizer p(pocket::pre_tokenizer_rule("deepseek-coder").patterns);
    EXPECT_EQ(p.split("\u0CF3\u0CF3"), (Words{"\u0CF3\u0CF3"}));
}

TEST(PreTokenizer, InvalidUtf8BecomesReplacementCharacters) {
    // U+FFFD is a symbol: it joins the letters after it, as any non-letter prefix does.
    EXPECT_EQ(llama3().split("a\xFF" "b"), (Words{"a", "\uFFFD" "b"}));
}

}  // namespace
