// End-to-end: the `run` executable on the bundled model, as a user types it.
#include "flag_error.hpp"
#include "run_tool.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

using pocket::test::expect_flag_error;

// llama.cpp takes the last of a repeated flag; wrapper scripts append flags and rely on it.
TEST(RunTool, RepeatedFlagsTakeTheLastValue) {
    const Result once = run_tool("run", "--temp 0 -n 6 -t 1");
    const Result twice = run_tool("run", "--temp 0.9 -n 40 -t 2 --temp 0 -n 6 -t 1 --ignore-eos --ignore-eos");
    ASSERT_EQ(once.status, 0) << once.err;
    ASSERT_EQ(twice.status, 0) << twice.err;
    EXPECT_EQ(once.out, twice.out);
}

TEST(RunTool, OutOfRangeValuesNameTheFlagAndTheRange) {
    for (const auto& [args, named] : std::vector<std::pair<std::string, std::string>>{
             {"-n -2", "-n -2: must be between -1 and"},
             {"-t 0", "-t 0: must be between 1 and 4096"},
             {"-t 100000", "-t 100000"},
             {"--repeat-last-n -2", "--repeat-last-n -2"},
             {"--top-p 1.5", "--top-p 1.5: must be between 0 and 1"},
             {"--min-p -0.1", "--min-p"},
             {"--typical 2", "--typical"},
             {"--temp nan", "--temp nan"},
             {"-c 100000000", "-c 100000000"}})
        expect_flag_error("run", args, named);
}

TEST(RunTool, ArgumentErrorsAreOneLineWithASuggestion) {
    expect_flag_error("run", "--tmep 0", "unknown flag --tmep (did you mean --temp?)");
    expect_flag_error("run", "-n", "-n");
    expect_flag_error("tokenize", "--idss -p hi", "did you mean --ids?");
    expect_flag_error("gguf", "info", "file");
}

// llama.cpp's multi-letter short flags: translated where pocket has the flag, named as
// unsupported otherwise, never split into single letters (-fa as -f a).
TEST(RunTool, LlamaCppShortFlags) {
    const Result plain = run_tool("run", "--temp 0 -n 6 -t 1");
    const Result no_cnv = run_tool("run", "-cnv -no-cnv --temp 0 -n 6 -t 1 --jinja --log-disable");
    ASSERT_EQ(no_cnv.status, 0) << no_cnv.err;
    EXPECT_EQ(no_cnv.out, plain.out);
    expect_flag_error("run", "-cb", "-cb: a llama.cpp flag not supported by pocket");
    expect_flag_error("run", "-hf x/y", "-hf: a llama.cpp flag not supported by pocket");
    expect_flag_error("run", "-xyz", "unknown flag -xyz");
    expect_flag_error("bench", "-m x.gguf -mmp 0", "-mmp: a llama.cpp flag not supported by pocket");
    const Result version = run_tool("run", "--version");
    EXPECT_EQ(version.status, 0);
    EXPECT_TRUE(version.out.starts_with("run (pocket) ")) << version.out;
}

// A context above the trained one is allowed, with a warning naming both sizes.
TEST(RunTool, ContextAboveTheTrainedOneWarns) {
    const Result r = run_tool("run", "--temp 0 -n 2 -t 1 -c 4096");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("warning: -c 4096 is more than the 512 tokens the model was trained with"), std::string::npos) << r.err;
}

// Sizes are checked before any arithmetic: pp + tg + 1 cannot overflow, -r 0 cannot divide by 0.
TEST(BenchTool, SizesAndRepetitionsAreChecked) {
    expect_flag_error("bench", "-m x.gguf -p 2147483647", "-p 2147483647: must be between 0 and");
    expect_flag_error("bench", "-m x.gguf -r 0", "-r 0: must be between 1 and");
    expect_flag_error("bench", "-m x.gguf -t 1,-1", "-t -1");
    expect_flag_error("perplexity", "-m x.gguf -f " + (pocket::test::source_dir() / "README.md").string() + " -t 0", "-t 0");
}

// -p "" is BOS alone (llama.cpp); the default prompt is only for neither -p nor -f.
TEST(RunTool, EmptyPromptIsBosOnly) {
    const Result r = run_tool("run", "-p '' --temp 0 -n 2 -t 1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("/     1 tokens"), std::string::npos) << "one prompt token: " << r.err;
}

// Escapes in -p are processed by default, as llama.cpp does; --no-escape keeps them.
TEST(RunTool, EscapesByDefaultUnlessNoEscape) {
    Result r = run_tool("run", "-p 'Once\\nupon' --temp 0 -n 1 -t 1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("Once\nupon")) << r.out;
    r = run_tool("run", "-p 'Once\\nupon' --temp 0 -n 1 -t 1 --no-escape");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("Once\\nupon")) << r.out;
}

// -st: one message, its answer, and the chat ends (llama.cpp's --single-turn).
TEST(RunTool, SingleTurnAnswersOneMessageAndLeaves) {
    const fs::path one = write_temp("st-one.txt", "Once upon a time\n");
    const fs::path two = write_temp("st-two.txt", "Once upon a time\nTell me a story\n");
    const Result a = run_tool("run", "-i --temp 0 -n 8 -t 1 --ignore-eos < " + one.string());
    const Result b = run_tool("run", "-st --temp 0 -n 8 -t 1 --ignore-eos < " + two.string());
    fs::remove(one);
    fs::remove(two);
    ASSERT_EQ(a.status, 0) << a.err;
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
}

// With shifting on, a message longer than the context is what went wrong: say that, not
// "--no-context-shift is set".
TEST(RunTool, MessageLongerThanTheContextSaysSo) {
    std::string message;
    for (int i = 0; i < 50; ++i) message += "the little dog ran ";
    const fs::path in = write_temp("st-long.txt", message + "\n");
    const Result r = run_tool("run", "-i -c 64 -n 4 -t 1 < " + in.string());
    fs::remove(in);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("the message does not fit in the context (64 tokens)"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("--no-context-shift is set"), std::string::npos) << r.err;
}
