// Token lists that llama.cpp produced for the bundled stories260K model (tok512, an SPM
// vocabulary inside a full model GGUF): the prompt and the perplexity texts.
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace {

using Ids = std::vector<pocket::TokenId>;

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The reference token files are flat JSON arrays of integers.
Ids read_ids(const std::filesystem::path& p) {
    std::string text = slurp(p);
    for (char& c : text) {
        if (c == '[' || c == ']' || c == ',') c = ' ';
    }
    std::istringstream in(text);
    Ids ids;
    for (long v; in >> v;) ids.push_back(static_cast<pocket::TokenId>(v));
    return ids;
}

TEST(StoriesTokens, PromptMatchesLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = pocket::Tokenizer::from_file((shared / "gguf" / "stories260K-f32.gguf").string());
    EXPECT_EQ(tok.tokenize("Once upon a time, there was a little girl named Lily.", true),
              read_ids(shared / "reference" / "tokens" / "stories260K_prompt.json"));
}

std::string hex(const std::string& bytes) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

// Greedy generations of the reference: pieces (special = false) and detokenized texts.
TEST(StoriesTokens, GreedyTextsDetokenizeLikeLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    const auto manifest = nlohmann::json::parse(slurp(shared / "reference" / "manifest.json"));
    const auto tok = pocket::Tokenizer::from_file((shared / "gguf" / "stories260K-f32.gguf").string());
    size_t checked = 0;
    for (const auto& [model, entry] : manifest["a_stories260K"]["models"].items()) {
        for (const auto& [name, c] : entry["cases"].items()) {
            const Ids in = c["tokens_in"].get<Ids>();
            const Ids gen = c["greedy_tokens"].get<Ids>();
            const auto pieces = c["greedy_pieces_hex"].get<std::vector<std::string>>();
            ASSERT_EQ(pieces.size(), gen.size());
            for (size_t i = 0; i < gen.size(); ++i) {
                EXPECT_EQ(hex(tok.token_to_piece(gen[i], false)), pieces[i]) << model << " " << name << " token " << i;
            }
            EXPECT_EQ(tok.detokenize(gen), c["greedy_text"].get<std::string>()) << model << " " << name;
            Ids all = in;
            all.insert(all.end(), gen.begin(), gen.end());
            EXPECT_EQ(tok.detokenize(all), c["full_text"].get<std::string>()) << model << " " << name;
            ++checked;
        }
    }
    EXPECT_GT(checked, 0u);
}

TEST(StoriesTokens, PerplexityTextsMatchLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    const auto tok = pocket::Tokenizer::from_file((shared / "gguf" / "stories260K-f32.gguf").string());
    const auto dir = shared / "reference" / "d_perplexity";
    const std::pair<const char*, const char*> cases[] = {
        {"mini_story.txt", "stories260K-f32.mini_story.c128.tokens.json"},
        {"stories260K_sampled.txt", "stories260K-f32.sampled.c128.tokens.json"},
    };
    for (auto [text_file, ids_file] : cases) {
        std::string text = slurp(dir / text_file);
        if (!text.empty() && text.back() == '\n') text.pop_back();  // llama-perplexity drops one
        const Ids expected = read_ids(dir / ids_file);
        const Ids got = tok.tokenize(text, true);
        ASSERT_EQ(got.size(), expected.size()) << text_file;
        EXPECT_EQ(got, expected) << text_file;
        // And back. After a BOS, llama.cpp keeps the SPM prefix space.
        EXPECT_EQ(tok.detokenize(got), " " + text) << text_file;
    }
}

}  // namespace
