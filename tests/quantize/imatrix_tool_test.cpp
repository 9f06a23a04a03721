// The imatrix tool against llama-imatrix: shared/reference/f_quantize/synth-8l.imatrix.gguf was
// made with `llama-imatrix -c 128` over d_perplexity/stories260K_sampled.txt (MANIFEST section
// f). pocket's forward pass is not bitwise llama.cpp's, so the sums match within a tolerance;
// the counts, chunk count and the types quantize then chooses must match exactly.
#include "imatrix_command.hpp"
#include "pocket/error.hpp"
#include "pocket/quantize.hpp"
#include "pocket/tokenizer.hpp"
#include "quantize_test_util.hpp"
#include "reference_cases.hpp"
#include "run_tool.hpp"
#include "scratch_dir.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

struct Stats {
    std::map<std::string, std::vector<float>> sums, counts;
    uint32_t chunk_count = 0, chunk_size = 0;
};

Stats read_stats(const fs::path& p) {
    const GgufFile f = GgufFile::open(p.string());
    Stats s;
    s.chunk_count = f.get<uint32_t>("imatrix.chunk_count");
    s.chunk_size = f.get<uint32_t>("imatrix.chunk_size");
    for (const auto& t : f.tensors()) {
        std::vector<float> v(static_cast<size_t>(t.n_elements()));
        std::memcpy(v.data(), t.data, v.size() * sizeof(float));
        const std::string name(t.name);
        if (name.ends_with(".in_sum2")) s.sums[name.substr(0, name.size() - 8)] = v;
        else if (name.ends_with(".counts")) s.counts[name.substr(0, name.size() - 7)] = v;
    }
    return s;
}

tools::ImatrixOptions synth_options(const fs::path& shared, const fs::path& out) {
    tools::ImatrixOptions o;
    o.model = (shared / "reference" / "f_quantize" / "synth-8l-f16.gguf").string();
    o.text = (shared / "reference" / "d_perplexity" / "stories260K_sampled.txt").string();
    o.output = out.string();
    o.n_ctx = 128;
    o.context.n_threads = 2;
    return o;
}

// The qwen3moe random model over `n_chunks` chunks of 128 tokens.
tools::ImatrixOptions moe_options(const fs::path& shared, const fs::path& out, int n_chunks) {
    tools::ImatrixOptions o;
    o.model = (shared / "reference" / "g_arch2" / "rand-qwen3moe-f32.gguf").string();
    o.text = (shared / "reference" / "d_perplexity" / "stories260K_sampled.txt").string();
    o.output = out.string();
    o.n_ctx = 128;
    o.n_chunks = n_chunks;
    o.context.n_threads = 2;
    return o;
}

}  // namespace

TEST(ImatrixTool, MatchesLlamaImatrix) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const auto r = tools::run_imatrix(synth_options(shared, dir / "p.gguf"));
    const Stats mine = read_stats(dir / "p.gguf");
    const Stats ref = read_stats(test::f_quantize_dir() / "synth-8l.imatrix.gguf");
    EXPECT_EQ(r.chunk_count, 23);
    EXPECT_EQ(mine.chunk_count, ref.chunk_count);
    EXPECT_EQ(mine.chunk_size, ref.chunk_size);
    ASSERT_EQ(mine.sums.size(), ref.sums.size()) << "a different set of weights";
    double worst = 0, sum_rel = 0;
    size_t n = 0;
    std::string worst_at;
    for (const auto& [name, want] : ref.sums) {
        ASSERT_TRUE(mine.sums.count(name)) << name << " is missing";
        EXPECT_EQ(mine.counts.at(name), ref.counts.at(name)) << name;
        const auto& got = mine.sums.at(name);
        ASSERT_EQ(got.size(), want.size()) << name;
        for (size_t i = 0; i < want.size(); ++i) {
            const double rel = std::abs(double(got[i]) - want[i]) / std::max(std::abs(double(want[i])), 1e-30);
            sum_rel += rel, ++n;
            if (rel > worst) worst = rel, worst_at = name + "[" + std::to_string(i) + "]";
        }
    }
    std::cout << "[ observed ] relative difference of the sums from llama-imatrix's: max " << worst << " (" << worst_at
              << "), mean " << sum_rel / static_cast<double>(n) << "\n";
    // llama.cpp's own thread counts give the same bits (MANIFEST); the difference here is two
    // engines' float arithmetic (f16 weights and KV cache, different summation orders) through
    // eight layers, largest where a column's sum is small.
    EXPECT_LT(worst, 5e-3);
    EXPECT_LT(sum_rel / static_cast<double>(n), 5e-4);
}

// quantize --imatrix with pocket's matrix chooses llama-quantize's types (the imatrix changes
// some: blk.0.ffn_down becomes Q4_1 in Q4_0, IQ4_NL in IQ4_NL) and, where a tensor's weights
// come out bitwise llama's, writes its bytes.
TEST(ImatrixTool, QuantizeWithItChoosesLlamaQuantizeTypes) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    tools::run_imatrix(synth_options(shared, dir / "p.gguf"));
    const Imatrix mine = load_imatrix((dir / "p.gguf").string());
    for (const std::string type : {"Q4_0", "IQ4_NL", "Q4_K_M", "Q2_K_S"}) {
        SCOPED_TRACE(type);
        const auto out = dir / (type + ".gguf");
        quantize_model((test::f_quantize_dir() / "synth-8l-f16.gguf").string(), out.string(), *find_quant_file_type(type),
                       {.n_threads = 2, .imatrix = &mine});
        std::ifstream in(test::f_quantize_dir() / ("synth-8l." + type + ".imatrix.types.json"));
        const auto expected = nlohmann::json::parse(in)["tensors"];
        const GgufFile f = GgufFile::open(out.string());
        ASSERT_EQ(f.tensors().size(), expected.size());
        for (const auto& t : f.tensors())
            EXPECT_TRUE(ggml_type_from_name(expected.at(std::string(t.name)).get<std::string>()) == t.type)
                << t.name << ": " << ggml_type_info(t.type).name << ", llama-quantize chose " << expected.at(std::string(t.name));
        const auto want = test::read_hashes(test::f_quantize_dir() / ("synth-8l." + type + ".imatrix.xxh64.txt"));
        const auto got = test::hashes_of(f);
        size_t same = 0, quantized = 0;
        for (const auto& t : f.tensors())
            if (ggml_type_info(t.type).block_size > 1) {
                ++quantized;
                same += got.at(std::string(t.name)) == want.at(std::string(t.name));
            }
        std::cout << "[ observed ] " << type << " with pocket's imatrix: " << same << " of " << quantized
                  << " quantized tensors bitwise llama-quantize's (with llama-imatrix's matrix)\n";
    }
}

// The legacy .dat holds the same averages; --in-file adds files (alone, it only combines).
TEST(ImatrixTool, DatFormatAndCombiningFiles) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    auto o = synth_options(shared, dir / "p.gguf");
    tools::run_imatrix(o);
    o.output = (dir / "p.dat").string();
    const auto dat = tools::run_imatrix(o);
    EXPECT_TRUE(dat.dat);
    const Imatrix g = load_imatrix((dir / "p.gguf").string()), d = load_imatrix((dir / "p.dat").string());
    EXPECT_TRUE(d.legacy);
    EXPECT_EQ(d.chunk_count, 23);
    ASSERT_EQ(g.values.size(), d.values.size());
    for (const auto& [name, v] : g.values)
        for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(d.values.at(name)[i], v[i], std::abs(v[i]) * 1e-6) << name << "[" << i << "]";

    tools::ImatrixOptions merge;
    merge.in_files = {(dir / "p.gguf").string(), (dir / "p.gguf").string()};
    merge.n_ctx = 128;
    merge.output = (dir / "twice.gguf").string();
    const auto m = tools::run_imatrix(merge);
    EXPECT_EQ(m.n_chunks_evaluated, 0u);
    EXPECT_EQ(m.chunk_count, 46);
    const Stats once = read_stats(dir / "p.gguf"), twice = read_stats(dir / "twice.gguf");
    for (const auto& [name, v] : once.sums) {
        for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(twice.sums.at(name)[i], 2 * v[i]) << name;
        EXPECT_EQ(twice.counts.at(name)[0], 2 * once.counts.at(name)[0]) << name;
    }
    // A .dat read back in holds averages times the chunk size: the same averages again.
    merge.in_files = {(dir / "p.dat").string()};
    merge.output = (dir / "from_dat.gguf").string();
    tools::run_imatrix(merge);
    const Imatrix back = load_imatrix((dir / "from_dat.gguf").string());
    for (const auto& [name, v] : g.values)
        for (size_t i = 0; i < v.size(); ++i) ASSERT_NEAR(back.values.at(name)[i], v[i], std::abs(v[i]) * 1e-5) << name;
}

// Experts: each (token, slot) adds its input to the expert it went to. The router sees every
// token's same input once, so the experts' sums add up to n_used times the router's.
TEST(ImatrixTool, ExpertsShareOutTheRoutersInputs) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const tools::ImatrixOptions o = moe_options(shared, dir / "moe.gguf", 4);
    tools::run_imatrix(o);
    const Stats s = read_stats(dir / "moe.gguf");
    const auto model = Model::load(o.model);
    const int64_t n_used = model->hparams().n_expert_used, n_expert = model->hparams().n_expert;
    ASSERT_GT(n_expert, 1);
    const auto& router = s.sums.at("blk.0.ffn_gate_inp.weight");
    const auto& experts = s.sums.at("blk.0.ffn_gate_exps.weight");
    const auto& counts = s.counts.at("blk.0.ffn_gate_exps.weight");
    ASSERT_EQ(static_cast<int64_t>(counts.size()), n_expert);
    ASSERT_EQ(experts.size(), router.size() * static_cast<size_t>(n_expert));
    double total = 0;
    for (float c : counts) total += c;
    EXPECT_EQ(total, 4.0 * 128 * static_cast<double>(n_used));
    for (size_t j = 0; j < router.size(); ++j) {
        double sum = 0;
        for (int64_t e = 0; e < n_expert; ++e) sum += experts[static_cast<size_t>(e) * router.size() + j];
        EXPECT_NEAR(sum, n_used * double(router[j]), 1e-4 * n_used * router[j]) << "column " << j;
    }
}

// The down experts read a different row per slot (x [n_ff, n_used, n_tokens]): their sums and
// counts per expert, recounted here from one chunk's inputs and expert ids as the model
// computes them, must be what the tool wrote.
TEST(ImatrixTool, EachSlotsRowGoesToItsExpert) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const tools::ImatrixOptions o = moe_options(shared, dir / "moe.gguf", 1);
    tools::run_imatrix(o);
    const Stats s = read_stats(dir / "moe.gguf");

    const auto model = Model::load(o.model);
    std::ifstream in(o.text);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    auto tokens = tools::perplexity_tokens(*model, text);
    tokens.resize(128);
    const auto& vocab = model->tokenizer().vocab();
    if (vocab.add_bos() && vocab.special().bos != kNoToken) tokens[0] = vocab.special().bos;  // as the tool does
    const std::string name = "blk.1.ffn_down_exps.weight";
    std::vector<double> sums;
    std::vector<double> counts;
    Context ctx(*model, {.n_ctx = 128, .n_threads = 2});
    ctx.observe_matmul_inputs([&](const MatmulInput& x) {
        if (x.weight != name) return;
        ASSERT_NE(x.ids, nullptr);
        ASSERT_EQ(x.n_x, x.n_used) << "a down expert reads one row per slot";
        sums.resize(static_cast<size_t>(x.n_in * x.n_expert));
        counts.resize(static_cast<size_t>(x.n_expert));
        for (int64_t t = 0; t < x.n_tokens; ++t)
            for (int64_t slot = 0; slot < x.n_used; ++slot) {
                const int32_t e = x.ids[t * x.n_used + slot];
                counts[static_cast<size_t>(e)] += 1;
                for (int64_t j = 0; j < x.n_in; ++j) {
                    const double v = x.x[(t * x.n_x + slot) * x.n_in + j];
                    sums[static_cast<size_t>(e * x.n_in + j)] += v * v;
                }
            }
    });
    ctx.decode(tokens, true);
    ASSERT_FALSE(counts.empty()) << name << " was never observed";
    const auto& got_counts = s.counts.at(name);
    const auto& got_sums = s.sums.at(name);
    ASSERT_EQ(got_counts.size(), counts.size());
    ASSERT_EQ(got_sums.size(), sums.size());
    size_t used = 0;
    for (size_t e = 0; e < counts.size(); ++e) {
        EXPECT_EQ(got_counts[e], counts[e]) << "expert " << e;
        used += counts[e] > 0;
    }
    EXPECT_GT(used, 1u) << "the tokens went to a single expert: the test shows nothing";
    for (size_t i = 0; i < sums.size(); ++i) EXPECT_NEAR(got_sums[i], sums[i], 1e-5 * sums[i] + 1e-30) << i;
}

TEST(ImatrixTool, RefusesToOverwriteItsInputsOrToDoNothing) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    auto o = synth_options(shared, dir / "p.gguf");
    const auto before = fs::file_size(o.model);
    o.output = o.model;
    EXPECT_THROW(tools::run_imatrix(o), Error);
    EXPECT_EQ(fs::file_size(o.model), before);
    o.output = o.text;
    EXPECT_THROW(tools::run_imatrix(o), Error);
    tools::ImatrixOptions nothing;
    nothing.output = (dir / "x.gguf").string();
    EXPECT_THROW(tools::run_imatrix(nothing), Error);
    EXPECT_FALSE(fs::exists(dir / "x.gguf"));
    o = synth_options(shared, dir / "p.gguf");
    o.output_format = "csv";
    EXPECT_THROW(tools::run_imatrix(o), Error);
}

// The tool as a user types it: llama-imatrix's flags, then quantize --imatrix with its file;
// bad input is one line and exit 1.
TEST(ImatrixTool, CommandLine) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const std::string model = (test::f_quantize_dir() / "synth-8l-f16.gguf").string();
    const std::string text = (shared / "reference" / "d_perplexity" / "stories260K_sampled.txt").string();
    const std::string out = (dir / "m.imatrix").string();
    auto r = test::run_tool("imatrix", "-m " + model + " -f " + text + " -c 128 --chunks 4 -t 2 -o " + out + " --output-format gguf");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("[4]"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("4 chunks of 128"), std::string::npos) << r.err;
    EXPECT_EQ(load_imatrix(out).chunk_count, 4);
    r = test::run_tool("quantize", "--imatrix " + out + " " + model + " " + (dir / "q.gguf").string() + " Q4_K_M 2");
    EXPECT_EQ(r.status, 0) << r.err;
    for (const std::string& bad : {"-f " + text + " -o " + (dir / "x.gguf").string(),          // no model
                                  "-m " + model + " -f " + text + " -o " + model,                // onto its input
                                  "-m " + model + " -f " + text + " -c 2",                       // chunk too small
                                  "-m " + model + " -f " + text + " --output-format csv -o " + (dir / "x").string(),
                                  "-o " + (dir / "x.gguf").string()}) {                          // nothing to do
        r = test::run_tool("imatrix", bad);
        EXPECT_EQ(r.status, 1) << bad << ": " << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
        EXPECT_EQ(r.err.rfind("imatrix: ", 0), 0u) << r.err;
    }
    EXPECT_FALSE(fs::exists(dir / "x.gguf"));
}
