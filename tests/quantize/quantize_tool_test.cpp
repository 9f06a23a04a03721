// The `quantize` executable, as a user types it.
#include "quantize_test_util.hpp"
#include "input_guard.hpp"
#include "interrupt.hpp"
#include "run_tool.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

using pocket::test::Result;

Result run_quantize(const std::string& args, const fs::path& /*scratch*/) { return pocket::test::run_tool("quantize", args); }

}  // namespace

TEST(QuantizeTool, QuantizesAndSummarizes) {
    POCKET_REQUIRE_SHARED(shared);
    pocket::test::ScratchDir dir;
    const auto in = shared / "reference" / "models" / "rand-llama-f32.gguf";
    const Result r = run_quantize("-v " + in.string() + " " + (dir / "q.gguf").string() + " q4_k_m 2", dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("bits per weight"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Q4_K_M"), std::string::npos) << r.out;
    // -v: one line per tensor (stderr is no terminal here, so no bar).
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 21) << r.err;
    EXPECT_NE(r.err.find("blk.1.ffn_down.weight"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("q6_K"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no progress bar when stderr is not a terminal";
    EXPECT_EQ(pocket::GgufFile::open((dir / "q.gguf").string()).get<uint32_t>("general.file_type"), 15u);
}

TEST(QuantizeTool, OutputBesideTheInputWhenNotNamed) {
    POCKET_REQUIRE_SHARED(shared);
    pocket::test::ScratchDir dir;
    fs::copy_file(shared / "reference" / "models" / "rand-llama-f32.gguf", dir / "m.gguf");
    const Result r = run_quantize((dir / "m.gguf").string() + " Q8_0 1", dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "ggml-model-Q8_0.gguf"));
    EXPECT_EQ(r.err, "");
}

TEST(QuantizeTool, ErrorsAreOneLine) {
    POCKET_REQUIRE_SHARED(shared);
    pocket::test::ScratchDir dir;
    const auto in = shared / "reference" / "models" / "rand-llama-f32.gguf";
    Result r = run_quantize(in.string() + " " + (dir / "q.gguf").string() + " Q4_2", dir.path());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("Q4_2"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

    auto bytes = pocket::test::read_file(in);
    bytes.resize(100000);
    std::ofstream(dir / "cut.gguf", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    r = run_quantize((dir / "cut.gguf").string() + " " + (dir / "q.gguf").string() + " Q4_0", dir.path());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("cut.gguf"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "q.gguf"));

    r = run_quantize((shared / "reference" / "models" / "rand-llama-pure-q4_0.gguf").string() + " " + (dir / "q.gguf").string() +
                     " Q8_0", dir.path());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--allow-requantize"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The output named as the model or the imatrix (or a link to either, a directory, a missing
// directory): refused before anything is read, the input untouched.
TEST(QuantizeTool, NeverOverwritesAnInput) {
    pocket::test::ScratchDir dir;
    pocket::test::write_text(dir / "m.gguf", "model bytes");
    pocket::test::write_text(dir / "imatrix.gguf", "imatrix bytes");
    for (const char* in : {"m.gguf", "imatrix.gguf"})
        pocket::test::expect_input_survives("quantize", dir, dir / in, [&](const std::string& out) {
            return "--imatrix " + (dir / "imatrix.gguf").string() + " " + (dir / "m.gguf").string() + " " + out + " Q4_K_M";
        });
}

// SIGINT while quantizing: the temporary is removed, the exit code is 130 and nothing
// appears under the target's name. The model is big enough (16 layers) that quantize is
// still at work when its temporary is seen.
TEST(QuantizeTool, InterruptLeavesNoTemporary) {
    pocket::test::ScratchDir dir;
    const Result synth = pocket::test::run_tool("gguf", "synth --preset tiny --layers 16 -o " + (dir / "m.gguf").string());
    ASSERT_EQ(synth.status, 0) << synth.err;
    const pid_t pid = pocket::test::spawn_tool("quantize", {(dir / "m.gguf").string(), (dir / "q.gguf").string(), "Q4_K_M", "1"});
    ASSERT_TRUE(pocket::test::wait_for_file(dir.path(), ".q.gguf.tmp.", pid)) << "quantize ended before it could be interrupted";
    ::kill(pid, SIGINT);
    EXPECT_EQ(pocket::test::wait_exit(pid), 130);
    EXPECT_EQ(dir.n_entries(), 1u) << "only the input is left";
}

TEST(QuantizeTool, ThreadCountInRangeAndRepeatedFlagsTakeTheLast) {
    pocket::test::ScratchDir dir;
    pocket::test::write_text(dir / "m.gguf", "model bytes");
    Result r = run_quantize((dir / "m.gguf").string() + " " + (dir / "q.gguf").string() + " Q8_0 99999", dir.path());
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("nthreads 99999: must be between 0 and 4096"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    // The last --output-tensor-type is the one checked: a bad first one is forgotten.
    r = run_quantize("--output-tensor-type nonsense --output-tensor-type q8_0 " + (dir / "m.gguf").string() + " " +
                         (dir / "q.gguf").string() + " Q8_0", dir.path());
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.find("nonsense"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("m.gguf"), std::string::npos) << "fails on the model, not the flags: " << r.err;
}

// --dry-run: llama-quantize's per-tensor lines and the sizes; nothing is written.
TEST(QuantizeTool, DryRunPrintsEachTensorAndWritesNothing) {
    pocket::test::ScratchDir dir;
    ASSERT_EQ(pocket::test::run_tool("gguf", "synth --preset tiny -o " + (dir / "m.gguf").string()).status, 0);
    const Result r = run_quantize("--dry-run " + (dir / "m.gguf").string() + " " + (dir / "q.gguf").string() + " Q4_K_M", dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 22) << "21 tensors and the summary: " << r.out;
    EXPECT_NE(r.out.find("[21/21] blk.1.ffn_up.weight"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nothing written"), std::string::npos) << r.out;
    EXPECT_EQ(dir.n_entries(), 1u) << "only the input is there";
}

// --tensor-type PATTERN=TYPE: the first matching pattern sets the type, over the mix.
TEST(QuantizeTool, TensorTypeOverridesTheMix) {
    pocket::test::ScratchDir dir;
    ASSERT_EQ(pocket::test::run_tool("gguf", "synth --preset tiny -o " + (dir / "m.gguf").string()).status, 0);
    const Result r = run_quantize("--tensor-type attn_v=q8_0 --tensor-type 'blk\\.1\\.ffn=Q5_0' --tensor-type ffn=q4_0 " +
                                      (dir / "m.gguf").string() + " " + (dir / "q.gguf").string() + " Q4_K_M 1",
                                  dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    const auto q = pocket::GgufFile::open((dir / "q.gguf").string());
    EXPECT_EQ(q.tensor("blk.0.attn_v.weight").type, pocket::GgmlType::Q8_0);
    EXPECT_EQ(q.tensor("blk.1.attn_v.weight").type, pocket::GgmlType::Q8_0);
    EXPECT_EQ(q.tensor("blk.1.ffn_up.weight").type, pocket::GgmlType::Q5_0);
    EXPECT_EQ(q.tensor("blk.0.ffn_up.weight").type, pocket::GgmlType::Q4_0) << "the first match wins";
    EXPECT_EQ(q.tensor("blk.0.attn_q.weight").type, pocket::GgmlType::Q4_K) << "the mix elsewhere";
    for (const auto& [spec, named] : std::vector<std::pair<std::string, std::string>>{
             {"attn_v", "'attn_v' is not PATTERN=TYPE"}, {"attn_v=q9_9", "'q9_9' is not a ggml type"}, {"'[=q8_0'", "not a valid regular expression"}}) {
        const Result bad = run_quantize("--tensor-type " + spec + " " + (dir / "m.gguf").string() + " " + (dir / "x.gguf").string() + " Q4_K_M",
                                        dir.path());
        EXPECT_EQ(bad.status, 1) << spec;
        EXPECT_NE(bad.err.find(named), std::string::npos) << bad.err;
        EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
    }
    EXPECT_FALSE(fs::exists(dir / "x.gguf"));
}

// --help: llama-quantize's type list (id, name, bits per weight), no CLI11 notation.
TEST(QuantizeTool, HelpListsTheTypesAsLlamaQuantize) {
    const Result r = pocket::test::run_tool("quantize", "--help");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("15  or  Q4_K_M   :  4.50 bits per weight"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" 7  or  Q8_0     :  8.50 bits per weight"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("38  or  MXFP4_MOE:  4.25 bits per weight"), std::string::npos) << r.out;
    for (const char* artifact : {"args(", "{false}", "TEXT:FILE", "x 2"}) EXPECT_EQ(r.out.find(artifact), std::string::npos) << artifact;
}
