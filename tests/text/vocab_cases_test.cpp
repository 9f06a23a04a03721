// Every .inp/.out case of shared/vocab, one test per vocabulary file and per .extra file:
// tokenize without special tokens and without parsing CONTROL tokens (llama.cpp's
// test-tokenizer-0), and compare id by id.
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> read_inputs(const std::filesystem::path& p) {
    static const std::string kSeparator = "\n__ggml_vocab_test__\n";
    const std::string all = slurp(p);
    std::vector<std::string> out;
    size_t pos = 0;
    while (true) {
        const size_t next = all.find(kSeparator, pos);
        if (next == std::string::npos) break;
        out.push_back(all.substr(pos, next - pos));
        pos = next + kSeparator.size();
    }
    return out;
}

std::vector<std::vector<pocket::TokenId>> read_expected(const std::filesystem::path& p) {
    std::vector<std::vector<pocket::TokenId>> out;
    std::istringstream in(slurp(p));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::vector<pocket::TokenId> ids;
        for (long v; ls >> v;) ids.push_back(static_cast<pocket::TokenId>(v));
        out.push_back(std::move(ids));
    }
    return out;
}

std::string show(const std::vector<pocket::TokenId>& ids) {
    std::string s;
    for (auto id : ids) {
        s += ' ';
        s += std::to_string(id);
    }
    return s;
}

// Loading a large vocabulary takes a moment: each is loaded once for its two tests.
const pocket::Tokenizer& tokenizer_for(const std::filesystem::path& gguf) {
    static std::map<std::string, std::unique_ptr<pocket::Tokenizer>> cache;
    auto& slot = cache[gguf.string()];
    if (!slot) slot = std::make_unique<pocket::Tokenizer>(pocket::Tokenizer::from_file(gguf.string()));
    return *slot;
}

struct Case {
    const char* vocab;
    const char* suffix;  // ".inp"/".out" or ".extra.inp"/".extra.out"
};

class VocabCases : public ::testing::TestWithParam<Case> {};

TEST_P(VocabCases, MatchesLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    const auto dir = shared / "vocab";
    const std::string base = std::string("ggml-vocab-") + GetParam().vocab + ".gguf";
    const std::string suffix = GetParam().suffix;
    const auto inputs = read_inputs(dir / (base + suffix + ".inp"));
    const auto expected = read_expected(dir / (base + suffix + ".out"));
    ASSERT_FALSE(inputs.empty());
    ASSERT_EQ(inputs.size(), expected.size()) << "case and expectation counts differ";

    const pocket::Tokenizer& tok = tokenizer_for(dir / base);
    size_t failed = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto got = tok.tokenize(inputs[i], /*add_special=*/false, /*parse_special=*/false);
        if (got != expected[i]) {
            ++failed;
            ADD_FAILURE() << base << suffix << " case " << i << " input [" << inputs[i] << "]\n  expected:" << show(expected[i])
                          << "\n  got:     " << show(got);
        }
    }
    RecordProperty("cases", static_cast<int>(inputs.size()));
    RecordProperty("failed", static_cast<int>(failed));
    EXPECT_EQ(failed, 0u) << failed << " of " << inputs.size() << " cases differ";
}

const Case kCases[] = {
    {"llama-spm", ""}, {"llama-spm", ".extra"}, {"phi-3", ""},   {"bert-bge", ""},  {"gpt-2", ""},
    {"mpt", ""},       {"refact", ""},          {"starcoder", ""}, {"deepseek-coder", ""},
    {"llama3", ""},    {"llama3", ".extra"},    {"qwen3", ""},   {"qwen3", ".extra"},
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
    std::string name = std::string(info.param.vocab) + (info.param.suffix[0] ? "_extra" : "");
    for (char& c : name) {
        if (c == '-') c = '_';
    }
    return name;
}

INSTANTIATE_TEST_SUITE_P(SharedVocab, VocabCases, ::testing::ValuesIn(kCases), case_name);

}  // namespace
