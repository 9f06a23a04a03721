// llama.cpp's run flags that pocket takes as a llama.cpp user types them: -fa, -tb,
// --override-kv, --keep -1, --in-prefix / --in-suffix, -p with -cnv, -sys without -cnv, and
// the random seed in the summary.
#include "flag_error.hpp"
#include "run_tool.hpp"
#include "scratch_dir.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>

using pocket::test::expect_flag_error;
using pocket::test::Result;
using pocket::test::run_tool;

namespace {

std::string write(const pocket::test::ScratchDir& dir, const std::string& name, const std::string& text) {
    const auto p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

}  // namespace

// -fa on and auto are the fused attention (the default: the same text); off and 0 the
// separate ops, which run too, and need a float V cache as in llama.cpp.
TEST(RunFlags, FlashAttnOnOffAuto) {
    const Result plain = run_tool("run", "--temp 0 -n 6 -t 1");
    ASSERT_EQ(plain.status, 0) << plain.err;
    for (const char* v : {"on", "auto", "1"}) {
        const Result r = run_tool("run", std::string("--temp 0 -n 6 -t 1 -fa ") + v);
        ASSERT_EQ(r.status, 0) << v << ": " << r.err;
        EXPECT_EQ(r.out, plain.out) << v;
    }
    for (const char* v : {"off", "0"}) {
        const Result r = run_tool("run", std::string("--temp 0 -n 6 -t 1 -fa ") + v);
        ASSERT_EQ(r.status, 0) << v << ": " << r.err;
        EXPECT_FALSE(r.out.empty()) << v;
    }
    expect_flag_error("run", "-fa off -ctv q8_0", "-ctv q8_0 needs -fa on");
    expect_flag_error("run", "-fa maybe", "-fa maybe: must be on, off or auto");
}

// -tb: the prompt's batches on their own thread count; the text is the same bits.
TEST(RunFlags, ThreadsBatchIsCheckedAndGivesTheSameText) {
    const Result plain = run_tool("run", "--temp 0 -n 6 -t 1");
    for (const char* args : {"-t 1 -tb 2", "-t 2 -tb 1", "-tb 3"}) {
        const Result tb = run_tool("run", std::string("--temp 0 -n 6 ") + args);
        ASSERT_EQ(tb.status, 0) << tb.err;
        EXPECT_EQ(tb.out, plain.out) << args;
    }
    expect_flag_error("run", "-tb 0", "-tb 0: must be between 1 and");
}

// --override-kv KEY=TYPE:VALUE replaces what the model reads, as llama.cpp's does.
TEST(RunFlags, OverrideKvReplacesMetadata) {
    Result r = run_tool("run", "--temp 0 -n 1 -t 1 -c 256 --override-kv llama.context_length=int:128");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("-c 256 is more than the 128 tokens the model was trained with"), std::string::npos) << r.err;
    // Without BOS, an empty prompt has no token at all.
    r = run_tool("run", "-p '' -n 1 --override-kv tokenizer.ggml.add_bos_token=bool:false");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("the prompt is empty and the model adds no BOS token"), std::string::npos) << r.err;
    r = run_tool("run", "--temp 0 -n 1 -t 1 --override-kv general.name=str:renamed --override-kv pocket.test=float:0.5");
    EXPECT_EQ(r.status, 0) << r.err;
    expect_flag_error("run", "--override-kv llama.context_length", "--override-kv llama.context_length: no =TYPE:VALUE");
    expect_flag_error("run", "--override-kv llama.context_length=128", "no TYPE: before the value");
    expect_flag_error("run", "--override-kv llama.context_length=int:lots", "the value is not an integer");
    expect_flag_error("run", "--override-kv llama.context_length=i32:5", "unknown TYPE 'i32'");
    expect_flag_error("run", "--override-kv x=bool:yes", "a bool is true or false");
    // A value of the wrong type for the key: the model's own message, naming the file and key.
    expect_flag_error("run", "--override-kv llama.context_length=str:big", "llama.context_length");
}

// Messages around what the user types, as llama.cpp's interactive mode adds them.
TEST(RunFlags, InPrefixAndSuffixWrapEachMessage) {
    pocket::test::ScratchDir dir;
    const Result whole = run_tool("run", "-i --temp 0 -n 8 -t 1 --ignore-eos < " + write(dir, "a.txt", "Once upon a time\n"));
    const Result wrapped =
        run_tool("run", "-i --temp 0 -n 8 -t 1 --ignore-eos --in-prefix 'Once ' --in-suffix ' a time' < " + write(dir, "b.txt", "upon\n"));
    ASSERT_EQ(whole.status, 0) << whole.err;
    ASSERT_EQ(wrapped.status, 0) << wrapped.err;
    EXPECT_EQ(whole.out, wrapped.out);
}

// -p with -cnv is the first message; -st then answers it alone.
TEST(RunFlags, PromptWithConversationIsTheFirstMessage) {
    pocket::test::ScratchDir dir;
    const Result typed = run_tool("run", "-i --temp 0 -n 8 -t 1 --ignore-eos < " + write(dir, "a.txt", "Once upon a time\nTell me a story\n"));
    const Result given =
        run_tool("run", "-cnv -p 'Once upon a time' --temp 0 -n 8 -t 1 --ignore-eos < " + write(dir, "b.txt", "Tell me a story\n"));
    ASSERT_EQ(typed.status, 0) << typed.err;
    ASSERT_EQ(given.status, 0) << given.err;
    EXPECT_EQ(typed.out, given.out);
    const Result one = run_tool("run", "-i --temp 0 -n 8 -t 1 --ignore-eos < " + write(dir, "c.txt", "Once upon a time\n"));
    const Result st = run_tool("run", "-cnv -st -p 'Once upon a time' --temp 0 -n 8 -t 1 --ignore-eos < /dev/null");
    ASSERT_EQ(st.status, 0) << st.err;
    EXPECT_EQ(one.out, st.out);
}

// -sys or --chat-template without -cnv: -p is one user turn of a rendered chat.
TEST(RunFlags, SystemPromptWithoutConversationRendersOneTurn) {
    const Result r = run_tool("run", "-sys 'Be brief' --chat-template chatml -p Hi --temp 0 -n 2 -t 1");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("<|im_start|>system\nBe brief<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"))
        << r.out;
    const Result t = run_tool("run", "--chat-template chatml -p Hi --temp 0 -n 2 -t 1");
    ASSERT_EQ(t.status, 0) << t.err;
    EXPECT_TRUE(t.out.starts_with("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")) << t.out;
}

// --keep -1 keeps the first message through every context shift; --keep -2 is an error.
TEST(RunFlags, KeepMinusOneKeepsTheFirstMessage) {
    pocket::test::ScratchDir dir;
    const std::string in = write(dir, "a.txt", "Once upon a time\n");
    const Result none = run_tool("run", "-i -v -c 64 -n 80 -t 1 --temp 0 --ignore-eos --keep 0 < " + in);
    const Result all = run_tool("run", "-i -v -c 64 -n 80 -t 1 --temp 0 --ignore-eos --keep -1 < " + in);
    ASSERT_EQ(none.status, 0) << none.err;
    ASSERT_EQ(all.status, 0) << all.err;
    EXPECT_NE(none.err.find("context shift: kept 0 tokens"), std::string::npos) << none.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(all.err, m, std::regex("context shift: kept ([0-9]+) tokens"))) << all.err;
    EXPECT_GT(std::stoi(m[1]), 4);
    expect_flag_error("run", "--keep -2", "--keep -2: must be between -1 and");
}

// A random seed is printed in the summary; -s with it repeats the text.
TEST(RunFlags, RandomSeedIsPrintedAndRepeatsTheRun) {
    const Result r = run_tool("run", "--temp 0.9 -n 24 -t 1");
    ASSERT_EQ(r.status, 0) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex("seed = ([0-9]+) \\(chosen at random"))) << r.err;
    const Result again = run_tool("run", "--temp 0.9 -n 24 -t 1 -s " + m[1].str());
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(again.out, r.out);
    EXPECT_EQ(again.err.find("chosen at random"), std::string::npos) << again.err;
}

// --help: llama.cpp's short forms beside the long names, no CLI11 notation.
TEST(RunFlags, HelpShowsShortFormsWithoutCli11Notation) {
    for (const char* tool : {"run", "bench", "perplexity", "tokenize", "convert"}) {
        const Result r = run_tool(tool, "--help");
        EXPECT_EQ(r.status, 0) << tool;
        for (const char* artifact : {"{false}", "{true}", "TEXT:FILE", "args(", "x 2"})
            EXPECT_EQ(r.out.find(artifact), std::string::npos) << tool << ": " << artifact << "\n" << r.out;
    }
    const Result run = run_tool("run", "--help");
    EXPECT_NE(run.out.find("-ngl, --n-gpu-layers"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("-fa, --flash-attn"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("-n, --n-predict N"), std::string::npos) << run.out;
}

// Errors found deep inside (tokenizer, hyper-parameters) name the model file and say what is
// wrong with it in a user's terms.
TEST(RunFlags, ModelErrorsNameTheFileInPlainTerms) {
    pocket::test::ScratchDir dir;
    const std::string tiny = (dir / "tiny.gguf").string();
    ASSERT_EQ(run_tool("gguf", "synth --preset tiny -o " + tiny).status, 0);
    // The stand-in vocabulary has no byte tokens: no text can be encoded.
    Result r = run_tool("tokenize", "-m " + tiny + " -p hi");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(tiny + ": the text holds a character this model cannot encode"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("SPM"), std::string::npos) << r.err;
    r = run_tool("run", "-n 1 --override-kv llama.rope.dimension_count=int:7");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("stories260K.gguf: llama.rope.dimension_count is 7, but rotary embeddings need an even size"), std::string::npos)
        << r.err;
}

// --render-chat takes a bare list of messages too, and without -m uses the bundled model;
// --help names the built-in templates.
TEST(RunFlags, RenderChatTakesABareListAndTheBundledModel) {
    pocket::test::ScratchDir dir;
    const std::string list = write(dir, "list.json", R"([{"role": "user", "content": "Hi"}])");
    Result r = run_tool("run", "--render-chat " + list + " --chat-template chatml");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    const Result bundled = run_tool("run", "--render-chat " + list);
    const Result with_m = run_tool("run", "--render-chat " + list + " -m " + (pocket::test::source_dir() / "models" / "stories260K.gguf").string());
    ASSERT_EQ(bundled.status, 0) << bundled.err;
    EXPECT_EQ(bundled.out, with_m.out);
    EXPECT_NE(bundled.out.find("Hi"), std::string::npos) << bundled.out;
    const Result help = run_tool("run", "--help");
    EXPECT_NE(help.out.find("chatml"), std::string::npos) << help.out;
    EXPECT_NE(help.out.find("llama3"), std::string::npos) << help.out;
}
