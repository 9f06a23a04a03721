// Every case of every shared/chat/*.json: the template renders `expected` exactly, or fails
// with the recorded `error` text in its message. The references were rendered by
// @huggingface/jinja and checked against Python Jinja2 and llama.cpp's engine.
#include "pocket/chat_template.hpp"
#include "pocket/error.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using nlohmann::ordered_json;

const char* const kFiles[] = {"llama3",    "llama3_1",                "qwen3",  "gemini",
                              "chatml",    "mistral-instruct-v0.1",   "zephyr", "vicuna"};
constexpr int kCasesPerFile = 7;  // the README: the same 7 cases, a..g, in every file

ordered_json load(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    EXPECT_TRUE(in) << "cannot open " << p;
    std::stringstream ss;
    ss << in.rdbuf();
    return ordered_json::parse(ss.str());
}

struct CaseParam {
    std::string file;
    int index;
};

class SharedChatCase : public ::testing::TestWithParam<CaseParam> {};

// Renders one case twice: through render_chat_json (the `run --render-chat` path) and through
// ChatTemplate::render with ChatMessage values; both must give the reference.
TEST_P(SharedChatCase, RendersAsReference) {
    POCKET_REQUIRE_SHARED(shared);
    const auto path = shared / "chat" / (GetParam().file + ".json");
    const ordered_json doc = load(path);
    const auto& cases = doc.at("cases");
    ASSERT_LT(GetParam().index, static_cast<int>(cases.size()));
    const ordered_json& c = cases[static_cast<size_t>(GetParam().index)];
    SCOPED_TRACE(GetParam().file + " / " + c.at("name").get<std::string>());

    const auto tmpl = pocket::ChatTemplate::parse(doc.at("template").get<std::string>());

    ordered_json vars;
    vars["messages"] = c.at("messages");
    vars["add_generation_prompt"] = c.at("add_generation_prompt");
    vars["bos_token"] = doc.at("bos_token");
    vars["eos_token"] = doc.at("eos_token");

    std::vector<pocket::ChatMessage> messages;
    for (const auto& m : c.at("messages")) messages.push_back({m.at("role"), m.at("content")});
    auto token = [&](const char* key) -> std::optional<std::string> {
        if (doc.at(key).is_null()) return std::nullopt;
        return doc.at(key).get<std::string>();
    };
    auto render_both = [&] {
        std::string a = pocket::render_chat_json(vars.dump(), tmpl);
        std::string b = tmpl.render(messages, c.at("add_generation_prompt").get<bool>(), token("bos_token"), token("eos_token"));
        EXPECT_EQ(a, b) << "render_chat_json and ChatTemplate::render disagree";
        return a;
    };

    if (c.contains("expected")) {
        EXPECT_EQ(render_both(), c.at("expected").get<std::string>());
    } else {
        const std::string error = c.at("error").get<std::string>();
        try {
            std::string out = pocket::render_chat_json(vars.dump(), tmpl);
            ADD_FAILURE() << "rendered instead of failing with \"" << error << "\":\n" << out;
        } catch (const pocket::Error& e) {
            EXPECT_NE(std::string(e.what()).find(error), std::string::npos) << "message: " << e.what();
        }
        EXPECT_THROW(tmpl.render(messages, c.at("add_generation_prompt").get<bool>(), token("bos_token"), token("eos_token")),
                     pocket::Error);
    }
}

std::vector<CaseParam> all_cases() {
    std::vector<CaseParam> out;
    for (const char* f : kFiles)
        for (int i = 0; i < kCasesPerFile; ++i) out.push_back({f, i});
    return out;
}

INSTANTIATE_TEST_SUITE_P(Chat, SharedChatCase, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<CaseParam>& param_info) {
                             std::string name;
                             for (char ch : param_info.param.file) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                             return name + "_" + std::string(1, static_cast<char>('a' + param_info.param.index));
                         });

// Each file holds exactly the cases this suite enumerates, so none goes untested.
TEST(SharedChatFiles, EachHasSevenCases) {
    POCKET_REQUIRE_SHARED(shared);
    for (const auto& entry : std::filesystem::directory_iterator(shared / "chat")) {
        if (entry.path().extension() != ".json") continue;
        const std::string stem = entry.path().stem().string();
        EXPECT_TRUE(std::find(std::begin(kFiles), std::end(kFiles), stem) != std::end(kFiles))
            << stem << ".json is not in this suite's list";
    }
    for (const char* f : kFiles) {
        const ordered_json doc = load(shared / "chat" / (std::string(f) + ".json"));
        EXPECT_EQ(doc.at("cases").size(), static_cast<size_t>(kCasesPerFile)) << f;
    }
}

}  // namespace
