// The `tokenize` command: llama-tokenize's output formats, flags and BOS rules.
#include "pocket/error.hpp"
#include "shared_data.hpp"
#include "tokenize_command.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using pocket::tools::TokenizeOptions;

std::string run(TokenizeOptions o, const std::string& stdin_text = "") {
    std::istringstream in(stdin_text);
    std::ostringstream out;
    pocket::tools::run_tokenize(o, in, out);
    return out.str();
}

TokenizeOptions options(const std::filesystem::path& shared, const char* vocab, const char* prompt) {
    TokenizeOptions o;
    o.model = (shared / "vocab" / (std::string("ggml-vocab-") + vocab + ".gguf")).string();
    o.prompt = prompt;
    return o;
}

TEST(TokenizeTool, ProcessesEscapesLikeLlamaCpp) {
    using pocket::tools::process_escapes;
    EXPECT_EQ(process_escapes("a\\nb\\tc\\\\d"), "a\nb\tc\\d");
    EXPECT_EQ(process_escapes("\\x41\\x4"), "A\\x4");
    EXPECT_EQ(process_escapes("\\q\\"), "\\q\\");
}

TEST(TokenizeTool, IdsWithBosWhereTheVocabularyAsks) {
    POCKET_REQUIRE_SHARED(shared);
    auto o = options(shared, "llama3", "Hello world");
    o.ids = true;
    EXPECT_EQ(run(o), "[128000, 9906, 1917]\n");
    o.no_bos = true;
    EXPECT_EQ(run(o), "[9906, 1917]\n");
    auto q = options(shared, "qwen3", "Hello world");
    q.ids = true;
    EXPECT_EQ(run(q), "[9707, 1879]\n");
    auto b = options(shared, "bert-bge", "Hello world");
    b.ids = true;
    EXPECT_EQ(run(b), "[101, 7592, 2088, 102]\n");
}

TEST(TokenizeTool, PiecesAndCount) {
    POCKET_REQUIRE_SHARED(shared);
    auto o = options(shared, "llama-spm", "Hello world");
    o.show_count = true;
    EXPECT_EQ(run(o), "     1 -> '<s>'\n 15043 -> ' Hello'\n  3186 -> ' world'\nTotal number of tokens: 3\n");
}

TEST(TokenizeTool, ParseSpecialByDefault) {
    POCKET_REQUIRE_SHARED(shared);
    auto o = options(shared, "llama3", "<|eot_id|>");
    o.ids = true;
    o.no_bos = true;
    EXPECT_EQ(run(o), "[128009]\n");
    o.parse_special = false;
    EXPECT_NE(run(o), "[128009]\n");
}

TEST(TokenizeTool, EscapesUnlessNoEscape) {
    POCKET_REQUIRE_SHARED(shared);
    TokenizeOptions o = options(shared, "gpt-2", "");
    o.prompt.reset();
    o.use_stdin = true;
    o.ids = true;
    EXPECT_EQ(run(o, "a\\nb"), "[64, 198, 65]\n");
    o.escape = false;
    EXPECT_EQ(run(o, "a\\nb"), "[64, 59, 46803]\n");
}

TEST(TokenizeTool, ErrorsNameTheProblem) {
    TokenizeOptions o;
    o.model = "/nonexistent/model.gguf";
    EXPECT_THROW(run(o), pocket::Error);  // no text given
    o.prompt.emplace(1, 'x');
    try {
        run(o);
        FAIL() << "no error";
    } catch (const pocket::Error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos);
    }
}

}  // namespace

// An ifstream reads nothing from a directory: an error naming it, not an empty text.
TEST(TokenizeTool, DirectoryAsTheTextIsAnError) {
    TokenizeOptions o;
    o.model = (pocket::test::source_dir() / "models" / "stories260K.gguf").string();
    o.file = pocket::test::source_dir().string();
    try {
        run(o);
        FAIL() << "a directory was tokenized";
    } catch (const pocket::Error& e) {
        EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos) << e.what();
    }
}
