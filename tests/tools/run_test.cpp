// End-to-end: the `run` executable on the bundled model, as a user types it.
#include "run_tool.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

using pocket::test::Result;
using pocket::test::run_tool;

TEST(RunTool, BundledModelGreedyTellsThePublishedStory) {
    const Result r = run_tool("run", "--temp 0 -n 40");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("Once upon a time, there was a little girl named Lily. She loved to play outside in the park."))
        << r.out;
    EXPECT_NE(r.err.find("prompt eval time"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("eval time"), std::string::npos);
    EXPECT_NE(r.err.find("load time"), std::string::npos);
}

TEST(RunTool, SameSeedSameTextWhateverTheThreads) {
    const Result a = run_tool("run", "-s 1234 --temp 0.9 -n 48 -t 1 -p 'Once upon a time, a cat'");
    const Result b = run_tool("run", "-s 1234 --temp 0.9 -n 48 -t 2 -b 3 -ub 3 -p 'Once upon a time, a cat'");
    const Result c = run_tool("run", "-s 99 --temp 0.9 -n 48 -t 1 -p 'Once upon a time, a cat'");
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
    EXPECT_NE(a.out, c.out) << "a different seed should give a different story";
}

TEST(RunTool, UntilEndOfContext) {
    const Result r = run_tool("run", "--temp 0 -n -1 -c 64");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_GT(r.out.size(), 100u);
}

TEST(RunTool, PromptLongerThanTheContextIsAClearError) {
    std::string long_prompt;
    for (int i = 0; i < 50; ++i) long_prompt += "the little dog ran ";
    const Result r = run_tool("run", "-c 32 -n 4 -p '" + long_prompt + "'");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("context"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
}

TEST(RunTool, BadInputGivesOneLineErrors) {
    Result r = run_tool("run", "-m /nonexistent/model.gguf");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("/nonexistent/model.gguf"), std::string::npos) << r.err;

    const fs::path bad = fs::temp_directory_path() / ("pocket-trunc-" + std::to_string(::getpid()) + ".gguf");
    {
        const auto bytes = pocket::test::read_file(pocket::test::source_dir() / "models" / "stories260K.gguf");
        std::ofstream(bad, std::ios::binary).write(bytes.data(), 20000);
    }
    r = run_tool("run", "-m " + bad.string());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    fs::remove(bad);

    r = run_tool("run", "--no-such-flag");
    EXPECT_NE(r.status, 0);
    r = run_tool("run", "-ctk q9_9");
    EXPECT_EQ(r.status, 1);
}

namespace {

fs::path write_temp(const std::string& name, const std::string& text) {
    const fs::path p = fs::temp_directory_path() / ("pocket-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(p, std::ios::binary) << text;
    return p;
}

}  // namespace

TEST(RunTool, RenderChatPrintsThePromptAndTemplateErrorsExitNonZero) {
    const fs::path msgs = write_temp("msgs.json", R"({"messages": [{"role": "user", "content": "Hi"}]})");
    Result r = run_tool("run", "--render-chat " + msgs.string() + " --chat-template chatml");
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");

    const fs::path tmpl = write_temp("tmpl.jinja", "{% if messages[0].role != 'system' %}"
                                                   "{{ raise_exception('the first message must be the system prompt') }}"
                                                   "{% endif %}");
    r = run_tool("run", "--render-chat " + msgs.string() + " --chat-template " + tmpl.string());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("the first message must be the system prompt"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    fs::remove(msgs);
    fs::remove(tmpl);
}

TEST(RunTool, FullContextWithoutShiftSaysSo) {
    const fs::path in = write_temp("chat-in.txt", "Once upon a time\n");
    const Result r = run_tool("run", "-i -c 64 --ignore-eos --no-context-shift < " + in.string());
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("the context is full (64 tokens)"), std::string::npos) << r.err;
    fs::remove(in);
}

// Piped input: one message per line, every answer to its end, no prompt decoration.
TEST(RunTool, PipedChatMessagesOnePerLine) {
    const fs::path in = write_temp("chat-lines.txt", "Once upon a time\n/clear\nTell me a story\n");
    const Result r = run_tool("run", "-i --temp 0 -n 16 -t 1 --ignore-eos < " + in.string());
    fs::remove(in);
    EXPECT_EQ(r.status, 0) << r.err;
    const std::string& out = r.out;
    const size_t cleared = out.find("(conversation cleared)\n");
    ASSERT_NE(cleared, std::string::npos) << out;
    // An answer before and after /clear, each on its own line.
    EXPECT_GT(cleared, 1u) << out;
    EXPECT_GT(out.size(), cleared + 24) << out;
    EXPECT_EQ(out.find("> "), std::string::npos) << "no prompt when stdin is not a terminal";
}
