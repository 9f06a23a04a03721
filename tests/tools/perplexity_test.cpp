// The perplexity tool against llama-perplexity's figures in ../shared/reference/d_perplexity.
#include "kl_summary.hpp"
#include "perplexity.hpp"
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "input_guard.hpp"
#include "interrupt.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
    const auto b = test::read_file(p);
    return std::string(b.begin(), b.end());
}

}  // namespace

// Every d_perplexity run whose model is shipped, with the model placed by `options`.
void match_llama_perplexity(const fs::path& shared, const ModelLoadOptions& options, const std::string& where) {
    const fs::path ref = shared / "reference";
    std::ifstream in(ref / "manifest.json");
    const auto runs = nlohmann::json::parse(in)["d_perplexity"]["runs"];
    size_t checked = 0;
    for (const auto& [name, run] : runs.items()) {
        const fs::path gguf = ref / run["gguf"].get<std::string>();
        if (!fs::exists(gguf)) continue;  // austen1M is a record only: its model is not shipped
        SCOPED_TRACE(name);
        const bool f32kv = name.find("kvf32") != std::string::npos;
        std::smatch m;
        const std::string final_line = run["final_line"];
        ASSERT_TRUE(std::regex_search(final_line, m, std::regex("PPL = ([0-9.]+)")));
        const double expected = std::stod(m[1]);
        const std::regex c_re("-c ([0-9]+)");
        const std::string cmd = run["command"];
        ASSERT_TRUE(std::regex_search(cmd, m, c_re));
        const uint32_t c = static_cast<uint32_t>(std::stoul(m[1]));

        auto model = Model::load(gguf.string(), options);
        Context ctx(*model, {.n_ctx = c, .n_threads = 2, .type_k = f32kv ? GgmlType::F32 : GgmlType::F16,
                             .type_v = f32kv ? GgmlType::F32 : GgmlType::F16});
        const auto tokens = tools::perplexity_tokens(*model, slurp(ref / run["text_file"].get<std::string>()));
        std::ifstream tin(ref / run["tokens_file"].get<std::string>());
        EXPECT_EQ(tokens, nlohmann::json::parse(tin).get<std::vector<int32_t>>()) << "tokenization differs from llama.cpp's";
        const auto r = tools::compute_perplexity(ctx, tokens, {.n_ctx = c});
        std::cout << "[ observed ] " << name << where << ": PPL " << r.ppl << " vs llama.cpp " << expected << "\n";
        EXPECT_NEAR(r.ppl, expected, expected * 1e-3);
        const auto running = run["running_ppl_per_chunk"].get<std::vector<double>>();
        ASSERT_EQ(r.running_ppl.size(), running.size());
        for (size_t k = 0; k < running.size(); ++k) EXPECT_NEAR(r.running_ppl[k], running[k], running[k] * 1e-3) << "chunk " << k + 1;
        ++checked;
    }
    EXPECT_GE(checked, 4u);
}

TEST(Perplexity, MatchesLlamaPerplexity) {
    POCKET_REQUIRE_SHARED(shared);
    match_llama_perplexity(shared, {.gpu_layers = GpuLayers::layers(0)}, "");
}

// The same figures with every layer on the first GPU (lavapipe's Vulkan0 in CI).
TEST(Perplexity, MatchesLlamaPerplexityOnTheGpu) {
    POCKET_REQUIRE_SHARED(shared);
    const std::vector<Device*> gpus = gpu_devices();
    if (gpus.empty()) GTEST_SKIP() << "no GPU device on this machine";
    match_llama_perplexity(shared, {.gpu_layers = GpuLayers::all(), .device = std::string(gpus.front()->name())},
                           std::string(" on ") + std::string(gpus.front()->name()));
}

TEST(Perplexity, IndependentOfThreadsAndBatch) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "gguf" / "stories260K-q8_0.gguf").string());
    const auto tokens = tools::perplexity_tokens(*model, slurp(shared / "text" / "mini_story.txt"));
    std::vector<double> ppl;
    for (auto [threads, ubatch] : {std::pair{1, 128u}, std::pair{2, 32u}, std::pair{3, 5u}}) {
        Context ctx(*model, {.n_ctx = 128, .n_batch = ubatch, .n_ubatch = ubatch, .n_threads = threads});
        ppl.push_back(tools::compute_perplexity(ctx, tokens, {.n_ctx = 128}).ppl);
    }
    EXPECT_EQ(ppl[0], ppl[1]);
    EXPECT_EQ(ppl[0], ppl[2]);
}

// -b > -c packs several chunks into one batch; each chunk must score exactly as alone, also
// when the chunk length is not a multiple of the attention block or the ubatch splits chunks.
TEST(Perplexity, SeveralChunksPerBatchGiveTheSameFigures) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "gguf" / "stories260K-f32.gguf").string());
    const auto tokens = tools::perplexity_tokens(*model, slurp(shared / "text" / "mini_story.txt"));  // 358 tokens
    for (uint32_t c : {64u, 50u}) {
        SCOPED_TRACE(c);
        Context alone(*model, {.n_ctx = c, .n_threads = 2});
        const auto one = tools::compute_perplexity(alone, tokens, {.n_ctx = c});
        ASSERT_GE(one.n_chunks, 5u);
        for (auto [n_seq, ubatch] : {std::pair{3u, 512u}, std::pair{4u, 37u}, std::pair{8u, 512u}}) {
            Context packed(*model, {.n_ctx = n_seq * c, .n_batch = 4096, .n_ubatch = ubatch, .n_threads = 2});
            const auto many = tools::compute_perplexity(packed, tokens, {.n_ctx = c, .n_seq = n_seq});
            EXPECT_EQ(many.running_ppl, one.running_ppl) << n_seq << " chunks per batch, ubatch " << ubatch;
            EXPECT_EQ(many.ppl, one.ppl);
        }
    }
    Context small(*model, {.n_ctx = 128});
    EXPECT_THROW(tools::compute_perplexity(small, tokens, {.n_ctx = 64, .n_seq = 3}), Error);
}

TEST(Perplexity, KlDivergenceOfAModelWithItselfIsZero) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "gguf" / "stories260K-f32.gguf").string());
    const auto tokens = tools::perplexity_tokens(*model, slurp(shared / "text" / "mini_story.txt"));
    const std::string base = (fs::temp_directory_path() / ("pocket-kl-" + std::to_string(::getpid()))).string();
    Context ctx(*model, {.n_ctx = 128, .n_threads = 2});
    tools::compute_perplexity(ctx, tokens, {.n_ctx = 128, .kl_base_out = base});
    const auto r = tools::compute_perplexity(ctx, tokens, {.n_ctx = 128, .kl_base_in = base});
    ASSERT_TRUE(r.kl.has_value());
    EXPECT_EQ(r.kl->kld_mean, 0.0);
    EXPECT_EQ(r.kl->kld_max, 0.0);
    EXPECT_EQ(r.kl->same_top, 1.0);
    EXPECT_EQ(r.kl->dp_rms, 0.0);
    EXPECT_NEAR(r.kl->base_ppl, r.ppl, r.ppl * 1e-3);

    // A different model against that base: a positive divergence.
    auto q8 = Model::load((shared / "gguf" / "stories260K-q8_0.gguf").string());
    Context ctx8(*q8, {.n_ctx = 128, .n_threads = 2});
    const auto r8 = tools::compute_perplexity(ctx8, tokens, {.n_ctx = 128, .kl_base_in = base});
    EXPECT_GT(r8.kl->kld_mean, 0.0);
    EXPECT_LT(r8.kl->kld_mean, 0.05);
    std::remove(base.c_str());
}

TEST(Perplexity, TextShorterThanTwoContextsIsAClearError) {
    POCKET_REQUIRE_SHARED(shared);
    auto model = Model::load((shared / "gguf" / "stories260K-f32.gguf").string());
    const auto tokens = tools::perplexity_tokens(*model, slurp(shared / "text" / "mini_story.txt"));  // 358 tokens
    Context ctx(*model, {.n_ctx = 256});
    try {
        tools::compute_perplexity(ctx, tokens, {.n_ctx = 256});
        FAIL() << "accepted a text shorter than 2 x ctx";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("at least 512"), std::string::npos) << e.what();
    }
}

// --kl-divergence-base naming the model or the text: refused before the model is loaded.
TEST(PerplexityTool, KlBaseNeverOverwritesAnInput) {
    test::ScratchDir dir;
    test::write_text(dir / "m.gguf", "model bytes");
    test::write_text(dir / "t.txt", "text bytes");
    for (const char* in : {"m.gguf", "t.txt"})
        test::expect_input_survives("perplexity", dir, dir / in, [&](const std::string& out) {
            return "-m " + (dir / "m.gguf").string() + " -f " + (dir / "t.txt").string() + " --kl-divergence-base " + out;
        });
}

// SIGINT / SIGTERM while the KL base is being written: the temporary is removed, the exit
// code is the shell's 128 + signal, and nothing appears under the target's name. The text is
// a FIFO nobody writes to, so the tool waits, temporary made, until it is signalled.
TEST(PerplexityTool, InterruptLeavesNoTemporary) {
    test::ScratchDir dir;
    ASSERT_EQ(::mkfifo((dir / "text").c_str(), 0600), 0);
    for (const int sig : {SIGINT, SIGTERM}) {
        SCOPED_TRACE(sig);
        const pid_t pid = test::spawn_tool("perplexity", {"-m", (test::source_dir() / "models" / "stories260K.gguf").string(), "-f",
                                                           (dir / "text").string(), "--kl-divergence-base", (dir / "base.kld").string()});
        ASSERT_TRUE(test::wait_for_file(dir.path(), ".base.kld.tmp.", pid)) << "no temporary beside the target";
        ::kill(pid, sig);
        EXPECT_EQ(test::wait_exit(pid), 128 + sig);
        EXPECT_EQ(dir.n_entries(), 1u) << "only the FIFO is left";
    }
}

// Two writers of one base use two temporaries: neither can write into the other's file.
TEST(PerplexityTool, KlBaseTemporariesAreUnique) {
    test::ScratchDir dir;
    {
        tools::KlBaseWriter a((dir / "base.kld").string());
        tools::KlBaseWriter b((dir / "base.kld").string());
        EXPECT_EQ(dir.n_entries(), 2u);
    }
    EXPECT_EQ(dir.n_entries(), 0u) << "unfinished writers remove their temporaries";
}

// The KL base is llama-perplexity's file: "_logits_", n_ctx, n_vocab, n_chunk, the chunks'
// tokens, then per chunk n_ctx - 1 - n_ctx/2 records of (scale, min, n_vocab uint16, padding
// to even). A base written by hand to that layout (a uniform distribution) is read back: its
// perplexity is exactly the vocabulary size. llama-perplexity's KLD report follows pocket's.
TEST(PerplexityTool, KlBaseIsLlamaPerplexitysFormat) {
    test::ScratchDir dir;
    const std::string model = (test::source_dir() / "models" / "stories260K.gguf").string();
    const std::string text = (test::source_dir() / "README.md").string();
    const std::string args = "-m " + model + " -f " + text + " -c 64 --chunks 3 -t 1 --kl-divergence-base ";
    const test::Result w = test::run_tool("perplexity", args + (dir / "base.kld").string());
    ASSERT_EQ(w.status, 0) << w.err;
    const auto bytes = test::read_file(dir / "base.kld");
    const int32_t n_ctx = 64, n_vocab = 512, n_chunk = 3, n_rec = n_ctx - 1 - n_ctx / 2, nv = 2 * ((n_vocab + 1) / 2) + 4;
    const size_t head = 8 + 12 + 4 * static_cast<size_t>(n_chunk * n_ctx);
    ASSERT_EQ(bytes.size(), head + static_cast<size_t>(n_chunk * n_rec * nv) * 2);
    EXPECT_EQ(std::string(bytes.data(), 8), "_logits_");
    int32_t h[3];
    std::memcpy(h, bytes.data() + 8, sizeof h);
    EXPECT_EQ(h[0], n_ctx);
    EXPECT_EQ(h[1], n_vocab);
    EXPECT_EQ(h[2], n_chunk);
    // The first record is a distribution: its probabilities add up to 1.
    float scale, min;
    std::memcpy(&scale, bytes.data() + head, 4);
    std::memcpy(&min, bytes.data() + head + 4, 4);
    double sum = 0;
    for (int i = 0; i < n_vocab; ++i) {
        uint16_t q;
        std::memcpy(&q, bytes.data() + head + 8 + 2 * i, 2);
        sum += std::exp(static_cast<double>(scale) * q + min);
    }
    EXPECT_NEAR(sum, 1.0, 1e-2);

    // The same header and tokens, every record uniform: scale 0, log p = -ln(512).
    std::vector<char> uniform(bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(head));
    std::vector<uint16_t> rec(static_cast<size_t>(nv), 0);
    const float zero = 0, log_uniform = -std::log(512.0f);
    std::memcpy(rec.data(), &zero, 4);
    std::memcpy(rec.data() + 2, &log_uniform, 4);
    for (int r = 0; r < n_chunk * n_rec; ++r)
        uniform.insert(uniform.end(), reinterpret_cast<const char*>(rec.data()), reinterpret_cast<const char*>(rec.data() + nv));
    std::ofstream(dir / "uniform.kld", std::ios::binary).write(uniform.data(), static_cast<std::streamsize>(uniform.size()));
    const test::Result r = test::run_tool("perplexity", args + (dir / "uniform.kld").string() + " --kl-divergence");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("Base   PPL:   512.0000"), std::string::npos) << r.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("Mean    KLD: +([0-9.]+)"))) << r.out;
    EXPECT_GT(std::stod(m[1]), 0.1);
    for (const char* line : {"====== KL divergence statistics ======", "99.0%   KLD:", "Median  KLD:", "====== Token probability statistics ======",
                             "95.0%   Δp:", "chunk          PPL"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    // The table comes as the chunks are done, as llama-perplexity prints it: before the summary.
    EXPECT_LT(r.out.find("chunk          PPL"), r.out.find("Final estimate")) << r.out;
    EXPECT_LT(r.out.find("\n    1 "), r.out.find("Final estimate")) << r.out;

    // pocket's former format is named as such.
    test::write_text(dir / "old.kld", std::string("PKTKLD01") + std::string(16, '\0'));
    const test::Result old = test::run_tool("perplexity", args + (dir / "old.kld").string() + " --kl-divergence");
    EXPECT_EQ(old.status, 1);
    EXPECT_NE(old.err.find("pocket's old format"), std::string::npos) << old.err;
}

TEST(PerplexityTool, PercentileIsTheNearestRank) {
    const std::vector<float> v{1, 2, 3, 4, 5};
    EXPECT_EQ(tools::percentile(v, 0.0), 1);
    EXPECT_EQ(tools::percentile(v, 0.5), 3);
    EXPECT_EQ(tools::percentile(v, 0.99), 5);
    EXPECT_EQ(tools::percentile({}, 0.5), 0);
}

// -tb (llama-perplexity's batch threads) and -fa: checked, and the same figures.
TEST(PerplexityTool, ThreadsBatchAndFlashAttnGiveTheSameFigures) {
    const std::string args = "-m " + (test::source_dir() / "models" / "stories260K.gguf").string() + " -f " +
                             (test::source_dir() / "README.md").string() + " -c 64 --chunks 2 -t 1";
    const test::Result a = test::run_tool("perplexity", args);
    const test::Result b = test::run_tool("perplexity", args + " -tb 2");
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_EQ(a.out, b.out);
    // -fa as llama-perplexity users pass it: on is the default, fused path; off the separate ops.
    const test::Result fa = test::run_tool("perplexity", args + " -fa on");
    ASSERT_EQ(fa.status, 0) << fa.err;
    EXPECT_EQ(fa.out, a.out);
    const test::Result off = test::run_tool("perplexity", args + " -fa off");
    ASSERT_EQ(off.status, 0) << off.err;
    EXPECT_NE(off.out.find("Final estimate"), std::string::npos) << off.out;
    EXPECT_EQ(test::run_tool("perplexity", args + " -fa maybe").status, 1);
    const test::Result bad = test::run_tool("perplexity", args + " -tb 0");
    EXPECT_EQ(bad.status, 1);
    EXPECT_NE(bad.err.find("-tb 0: must be between 1 and"), std::string::npos) << bad.err;
}
