// `run -i` on a qwen3 model with qwen3's own chat template (../shared/chat/qwen3.json): the
// first answer is what the model continues the template's rendering of that message with.
#include "run_tool.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace fs = std::filesystem;
using pocket::test::Result;
using pocket::test::run_tool;

TEST(Qwen3Chat, AnswersContinueTheTemplatesRendering) {
    POCKET_REQUIRE_SHARED(shared);
    const fs::path model = shared / "reference" / "g_arch2" / "rand-qwen3-f32.gguf";
    std::ifstream in(shared / "chat" / "qwen3.json");
    const auto spec = nlohmann::json::parse(in);
    const fs::path dir = fs::temp_directory_path();
    const std::string tag = std::to_string(::getpid());
    const fs::path tmpl = dir / ("pocket-qwen3-" + tag + ".jinja"), msgs = dir / ("pocket-qwen3-" + tag + ".json"),
                   prompt = dir / ("pocket-qwen3-" + tag + ".txt"), typed = dir / ("pocket-qwen3-" + tag + ".in");
    std::ofstream(tmpl) << spec["template"].get<std::string>();
    std::ofstream(msgs) << R"({"messages": [{"role": "user", "content": "Hello there"}]})";
    std::ofstream(typed) << "Hello there\n";
    const std::string common = "-m " + model.string() + " --temp 0 -n 8 --ignore-eos -t 2 ";

    const Result rendered = run_tool("run", "--render-chat " + msgs.string() + " --chat-template " + tmpl.string());
    ASSERT_EQ(rendered.status, 0) << rendered.err;
    ASSERT_NE(rendered.out.find("<|im_start|>assistant\n"), std::string::npos) << rendered.out;
    std::ofstream(prompt, std::ios::binary) << rendered.out;
    const Result by_prompt = run_tool("run", common + "--no-display-prompt -f " + prompt.string());
    const Result chat = run_tool("run", common + "-i --chat-template " + tmpl.string() + " < " + typed.string());
    const Result plain = run_tool("run", common + "--no-display-prompt -p 'Hello there'");
    for (const auto& p : {tmpl, msgs, prompt, typed}) fs::remove(p);

    ASSERT_EQ(by_prompt.status, 0) << by_prompt.err;
    ASSERT_EQ(chat.status, 0) << chat.err;
    EXPECT_EQ(chat.out, by_prompt.out);
    // The template matters: the bare message continues differently.
    EXPECT_NE(chat.out, plain.out);
}
