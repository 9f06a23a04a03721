// shared/vocab/hf-disagreements.json: where llama.cpp and HF differ, pocket follows llama.cpp
// both without and with parse_special.
#include "pocket/tokenizer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace {

using Ids = std::vector<pocket::TokenId>;

TEST(HfDisagreements, FollowLlamaCppWithAndWithoutParseSpecial) {
    POCKET_REQUIRE_SHARED(shared);
    std::ifstream in(shared / "vocab" / "hf-disagreements.json");
    std::stringstream ss;
    ss << in.rdbuf();
    const auto cases = nlohmann::json::parse(ss.str());
    ASSERT_FALSE(cases.empty());
    for (const auto& c : cases) {
        const auto tok = pocket::Tokenizer::from_file((shared / "vocab" / c["vocab"].get<std::string>()).string());
        const std::string text = c["text"].get<std::string>();
        EXPECT_EQ(tok.tokenize(text, false, false), c["llama_cpp"].get<Ids>()) << c["vocab"] << " #" << c["index"];
        EXPECT_EQ(tok.tokenize(text, false, true), c["llama_cpp_parse_special"].get<Ids>()) << c["vocab"] << " #" << c["index"];
    }
}

}  // namespace
