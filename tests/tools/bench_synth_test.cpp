// `gguf synth` writes models that load and run; `bench` reports llama-bench's fields.
#include "bench.hpp"
#include "pocket/context.hpp"
#include "pocket/gguf.hpp"
#include "pocket/model.hpp"
#include "input_guard.hpp"
#include "shared_data.hpp"
#include "synth.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <unistd.h>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

fs::path synth_tiny(const std::string& type, const std::string& vocab = {}) {
    const fs::path p = fs::temp_directory_path() / ("pocket-synth-" + type + "-" + std::to_string(::getpid()) + ".gguf");
    tools::SynthOptions o;
    o.preset = "tiny";
    o.output = p.string();
    o.type = type;
    o.vocab = vocab;
    tools::synth_model(o);
    return p;
}

// bench on one file: pp16 and tg4, each on 1 and 2 threads.
tools::BenchOptions pp_and_tg_on_1_and_2_threads(const fs::path& model, int repetitions) {
    tools::BenchOptions o;
    o.models = {model.string()};
    o.n_prompt = {16};
    o.n_gen = {4};
    o.threads = {1, 2};
    o.repetitions = repetitions;
    return o;
}

// What a decoded token reads, from the file's own tensor list: every tensor once, but one row
// of the embedding table (unless it is also the output matrix, then once more in full), and of
// an expert stack n_expert_used of n_expert slices.
uint64_t expected_bytes_per_token(const GgufFile& f, uint64_t n_expert, uint64_t n_used) {
    uint64_t n = 0;
    for (const auto& t : f.tensors()) {
        if (t.name == "token_embd.weight") {
            n += t.n_bytes / static_cast<uint64_t>(t.ne[1]);
            if (!f.find_tensor("output.weight")) n += t.n_bytes;
        } else if (t.name.find("_exps.") != std::string::npos) {
            n += t.n_bytes / n_expert * n_used;
        } else {
            n += t.n_bytes;
        }
    }
    return n;
}

}  // namespace

TEST(Synth, TinyModelLoadsAndGivesFiniteLogits) {
    for (const char* type : {"f32", "f16", "bf16"}) {
        const fs::path p = synth_tiny(type);
        auto model = Model::load(p.string());
        EXPECT_EQ(model->hparams().n_layer, 2u);
        EXPECT_EQ(model->hparams().n_embd, 256u);
        Context ctx(*model, {.n_ctx = 64, .n_threads = 2});
        const std::vector<TokenId> tokens{1, 5, 9, 200};
        ctx.decode(tokens);
        for (float l : ctx.last_logits()) ASSERT_TRUE(std::isfinite(l));
        fs::remove(p);
    }
}

TEST(Synth, TakesARealVocabulary) {
    POCKET_REQUIRE_SHARED(shared);
    const fs::path p = synth_tiny("f16", (shared / "vocab" / "ggml-vocab-llama-spm.gguf").string());
    const GgufFile f = GgufFile::open(p.string());
    EXPECT_EQ(f.get_strings("tokenizer.ggml.tokens").size(), 32000u);
    EXPECT_EQ(f.tensor("token_embd.weight").ne[1], 32000);
    EXPECT_EQ(f.tensor("blk.0.attn_q.weight").type, GgmlType::F16);
    EXPECT_EQ(f.tensor("blk.0.attn_norm.weight").type, GgmlType::F32);
    fs::remove(p);
}

// The new architectures' presets, cut to one layer and a 512-token vocabulary: they load
// (every tensor the architecture asks for, of the shape it expects) and run.
TEST(Synth, NewArchitecturePresetsLoadAndRun) {
    POCKET_REQUIRE_SHARED(shared);
    for (const char* preset : {"qwen3-0.6b", "gemma3-1b"}) {
        SCOPED_TRACE(preset);
        const fs::path p = fs::temp_directory_path() / (std::string("pocket-synth-") + preset + "-" + std::to_string(::getpid()) + ".gguf");
        tools::SynthOptions o;
        o.preset = preset;
        o.output = p.string();
        o.vocab = (shared / "gguf" / "stories260K-f32.gguf").string();
        o.n_layer = 1;
        tools::synth_model(o);
        auto model = Model::load(p.string());
        EXPECT_EQ(model->hparams().arch, std::string(preset).substr(0, 5) == "gemma" ? "gemma3" : "qwen3");
        Context ctx(*model, {.n_ctx = 64, .n_threads = 2});
        const std::vector<TokenId> tokens{1, 5, 9, 200};
        ctx.decode(tokens);
        for (float l : ctx.last_logits()) ASSERT_TRUE(std::isfinite(l));
        fs::remove(p);
    }
}

TEST(Model, BytesReadPerTokenCountsOneEmbeddingRowAndTheChosenExperts) {
    const fs::path p = synth_tiny("f16");
    auto model = Model::load(p.string());
    EXPECT_EQ(model->bytes_read_per_token(), expected_bytes_per_token(model->file(), 0, 0));
    EXPECT_LT(model->bytes_read_per_token(), model->weight_bytes());
    fs::remove(p);

    POCKET_REQUIRE_SHARED(shared);
    const fs::path moe = fs::temp_directory_path() / ("pocket-synth-moe-" + std::to_string(::getpid()) + ".gguf");
    tools::SynthOptions o;
    o.preset = "qwen3moe-small";
    o.output = moe.string();
    o.vocab = (shared / "gguf" / "stories260K-f32.gguf").string();
    o.n_layer = 1;
    tools::synth_model(o);
    auto m = Model::load(moe.string());
    const HParams& hp = m->hparams();
    ASSERT_GT(hp.n_expert, hp.n_expert_used);
    EXPECT_EQ(m->bytes_read_per_token(), expected_bytes_per_token(m->file(), hp.n_expert, hp.n_expert_used));
    fs::remove(moe);
}

// --bandwidth: each tg test has a memory read beside it; pp tests have none.
TEST(Bench, BandwidthReadBesideEachGenerationTest) {
    const fs::path p = synth_tiny("f32");
    tools::BenchOptions o = pp_and_tg_on_1_and_2_threads(p, 1);
    o.bandwidth = true;
    const auto results = tools::run_bench(o);
    ASSERT_EQ(results.size(), 4u);
    const uint64_t per_token = Model::load(p.string())->bytes_read_per_token();
    for (const auto& r : results) {
        EXPECT_EQ(r.weight_bytes_per_token, per_token);
        if (r.n_gen > 0) EXPECT_GT(r.read_bytes_per_s, 1e8);  // any machine reads 0.1 GB/s
        else EXPECT_EQ(r.read_bytes_per_s, 0.0);
        EXPECT_GE(r.peak_rss_bytes, r.model_size);  // the probe's buffer taken out, the weights still in
    }
    std::ostringstream md;
    tools::print_bench(results, "md", md);
    EXPECT_NE(md.str().find("| of read |"), std::string::npos) << md.str();
    fs::remove(p);
}

TEST(Bench, JsonHasLlamaBenchFields) {
    const fs::path p = synth_tiny("f32");
    const tools::BenchOptions o = pp_and_tg_on_1_and_2_threads(p, 2);
    const auto results = tools::run_bench(o);
    ASSERT_EQ(results.size(), 4u);  // (pp, tg) x (1, 2 threads)
    std::ostringstream out;
    tools::print_bench(results, "json", out);
    const auto j = nlohmann::json::parse(out.str());
    ASSERT_EQ(j.size(), 4u);
    for (const auto& r : j) {
        for (const char* key : {"model_filename", "model_type", "model_size", "model_n_params", "n_threads", "n_prompt", "n_gen",
                                "avg_ts", "stddev_ts"})
            EXPECT_TRUE(r.contains(key)) << key;
        EXPECT_GT(r["avg_ts"].get<double>(), 0.0);
        EXPECT_EQ(r["samples_ts"].size(), 2u);
        // pocket's additions: the load took some time, and the process held at least the weights
        EXPECT_GT(r["load_ms"].get<double>(), 0.0);
        EXPECT_GE(r["peak_rss_bytes"].get<uint64_t>(), r["model_size"].get<uint64_t>());
    }
    EXPECT_EQ(j[0]["n_prompt"], 16);
    EXPECT_EQ(j[1]["n_gen"], 4);
    EXPECT_EQ(j[2]["n_threads"], 2);
    // -o jsonl (llama-bench's): the same objects, one per line.
    std::ostringstream lines;
    tools::print_bench(results, "jsonl", lines);
    std::istringstream in(lines.str());
    size_t n = 0;
    for (std::string line; std::getline(in, line); ++n) EXPECT_EQ(nlohmann::json::parse(line), j[n]) << line;
    EXPECT_EQ(n, 4u);
    fs::remove(p);
}

// `gguf synth --vocab V -o V` (or a link to V, a directory): refused, the vocabulary untouched.
TEST(Synth, NeverOverwritesTheVocabulary) {
    test::ScratchDir dir;
    test::write_text(dir / "v.gguf", "vocabulary bytes");
    test::expect_input_survives("gguf", dir, dir / "v.gguf", [&](const std::string& out) {
        return "synth --preset tiny --vocab " + (dir / "v.gguf").string() + " -o " + out;
    });
}
