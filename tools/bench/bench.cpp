#include "bench.hpp"
#include "read_probe.hpp"

#include "../common/flag_checks.hpp"

#include "kernels/kernels.hpp"
#include "pocket/context.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include <sys/resource.h>

namespace pocket::tools {
namespace {

// "1B", "7B", "500M": the size class llama-bench puts in model_type.
std::string size_class(uint64_t n_params) {
    const double b = static_cast<double>(n_params) / 1e9;
    if (b >= 1.0) return fmt::format("{:.0f}B", std::round(b));
    if (n_params >= 1000000) return fmt::format("{:.0f}M", static_cast<double>(n_params) / 1e6);
    return fmt::format("{:.0f}K", static_cast<double>(n_params) / 1e3);
}

// Random token ids (not BOS/EOS): what the text says does not change the speed.
std::vector<TokenId> random_tokens(uint32_t n_vocab, int n, std::mt19937& rng) {
    std::vector<TokenId> t(static_cast<size_t>(n));
    for (auto& x : t) x = static_cast<TokenId>(3 + rng() % (n_vocab - 3));
    return t;
}

// The process's peak resident set (getrusage reports it in KiB on Linux).
uint64_t peak_rss_bytes() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every value in its range before any arithmetic with it (d + pp + tg + 1 must not overflow,
// nor a 2^31-token prompt be allocated); one line naming the flag when not.
void check_bench_options(const BenchOptions& o) {
    for (int p : o.n_prompt) check_range("-p", p, 0, kMaxTokens);
    for (int n : o.n_gen) check_range("-n", n, 0, kMaxTokens);
    for (const auto& [p, n] : o.pg) check_range("-pg", std::max(p, n), 0, kMaxTokens);
    for (int d : o.n_depth) check_range("-d", d, 0, kMaxTokens);
    for (int t : o.threads) check_threads("-t", t);
    for (int b : o.n_batch) check_range("-b", b, 1, kMaxTokens);
    for (int u : o.n_ubatch) check_range("-ub", u, 1, kMaxTokens);
    for (int f : o.flash_attn) check_range("-fa", f, -1, 1, "(1: on, 0: off, -1: auto)");
    check_range("-r", o.repetitions, 1, 1000000);
}

// One test of the run: the parameters of one BenchResult, before it is measured.
struct Test {
    int threads, n_batch, n_ubatch, flash_attn, depth, pp, tg;
};

// llama-bench's order: for each parameter combination, the pp sizes, then tg, then pg.
std::vector<Test> tests_of(const BenchOptions& o) {
    std::vector<Test> out;
    for (int b : o.n_batch)
        for (int ub : o.n_ubatch)
            for (int fa : o.flash_attn)
                for (int t : o.threads)
                    for (int d : o.n_depth) {
                        for (int p : o.n_prompt)
                            if (p > 0) out.push_back({t, b, ub, fa, d, p, 0});
                        for (int g : o.n_gen)
                            if (g > 0) out.push_back({t, b, ub, fa, d, 0, g});
                        for (const auto& [p, g] : o.pg)
                            if (p > 0 || g > 0) out.push_back({t, b, ub, fa, d, p, g});
                    }
    return out;
}

}  // namespace

std::string bench_test_name(const BenchResult& r) {
    std::string name = r.n_prompt && r.n_gen ? fmt::format("pp{}+tg{}", r.n_prompt, r.n_gen)
                       : r.n_prompt          ? fmt::format("pp{}", r.n_prompt)
                                             : fmt::format("tg{}", r.n_gen);
    if (r.n_depth) name += fmt::format(" @ d{}", r.n_depth);
    return name;
}

std::vector<BenchResult> run_bench(const BenchOptions& o) {
    check_bench_options(o);
    const std::vector<Test> tests = tests_of(o);
    const size_t n_total = tests.size() * o.models.size() * o.n_gpu_layers.size();
    size_t n_done = 0;
    std::vector<BenchResult> results;
    std::mt19937 rng(42);
    // Before any model, so that its buffer is a constant in the peak RSS (taken back out below).
    const std::unique_ptr<ReadProbe> probe = o.bandwidth ? std::make_unique<ReadProbe>() : nullptr;
    for (const auto& path : o.models)
      for (const std::string& ngl : o.n_gpu_layers) {
        ModelLoadOptions load;
        load.gpu_layers = GpuLayers::parse(ngl);
        load.device = o.device;
        load.repack = o.repack;
        load.n_ubatch = static_cast<uint32_t>(*std::max_element(o.n_ubatch.begin(), o.n_ubatch.end()));
        const auto load_start = std::chrono::steady_clock::now();
        auto model = Model::load(path, load);
        const double load_ms = 1000.0 * seconds(load_start);
        if (!model->placement().warning.empty() && &ngl == &o.n_gpu_layers.front())
            fmt::print(stderr, "warning: {}\n", model->placement().warning);
        std::string backends;
        for (const Device* d : model->placement().devices) backends += (backends.empty() ? "" : ",") + std::string(d->name());
        const uint32_t n_vocab = model->hparams().n_vocab;
        const uint64_t bytes_per_token = model->bytes_read_per_token();  // once per model, not per test
        for (const Test& t : tests) {
            BenchResult r;
            r.model_filename = path;
            r.model_type = fmt::format("{} {} {}", model->hparams().arch, size_class(model->n_params()), model->type_name());
            r.model_size = model->weight_bytes();
            r.model_n_params = model->n_params();
            r.weight_bytes_per_token = bytes_per_token;
            r.isa = kernels::isa_name(kernels::active_isa());
            r.backends = backends;
            r.n_gpu_layers = static_cast<int>(model->placement().n_gpu_layers);
            r.n_threads = t.threads;
            r.n_prompt = t.pp;
            r.n_gen = t.tg;
            r.n_depth = t.depth;
            r.n_batch = t.n_batch;
            r.n_ubatch = t.n_ubatch;
            r.flash_attn = t.flash_attn;
            // Before the test, so that a slow one shows what it is (llama-bench's --progress).
            if (o.progress)
                fmt::print(stderr, "bench: test {}/{}: {} ngl={} t={} b={} ub={} fa={} {}\n", ++n_done, n_total, path, ngl, t.threads,
                           t.n_batch, t.n_ubatch, t.flash_attn, bench_test_name(r));
            ContextOptions co;
            co.n_ctx = static_cast<uint32_t>(std::max(t.depth + t.pp + t.tg + 1, 256));
            co.n_batch = static_cast<uint32_t>(t.n_batch);
            co.n_ubatch = static_cast<uint32_t>(t.n_ubatch);
            co.n_threads = t.threads;
            co.flash_attn = t.flash_attn != 0;  // 0: off; 1 and auto (-1): fused
            Context ctx(*model, co);
            // One warm-up run, not counted (page faults of the mapping, graph planning).
            for (int rep = -1; rep < o.repetitions; ++rep) {
                ctx.clear();
                if (t.depth > 0) ctx.decode(random_tokens(n_vocab, t.depth, rng));  // -d: the context already holds this much
                const auto prompt = random_tokens(n_vocab, t.pp, rng);
                const auto gen = random_tokens(n_vocab, t.tg, rng);
                const auto t0 = std::chrono::steady_clock::now();
                if (t.pp > 0) ctx.decode(prompt);
                for (int i = 0; i < t.tg; ++i) ctx.decode(std::span<const TokenId>(&gen[static_cast<size_t>(i)], 1));
                const double s = seconds(t0);
                if (rep >= 0) r.samples_ts.push_back((t.pp + t.tg) / s);
            }
            double sum = 0, sum2 = 0;
            for (double x : r.samples_ts) sum += x;
            r.avg_ts = sum / static_cast<double>(r.samples_ts.size());
            for (double x : r.samples_ts) sum2 += (x - r.avg_ts) * (x - r.avg_ts);
            r.stddev_ts = r.samples_ts.size() > 1 ? std::sqrt(sum2 / static_cast<double>(r.samples_ts.size() - 1)) : 0.0;
            r.load_ms = load_ms;
            r.peak_rss_bytes = peak_rss_bytes();
            if (probe) r.peak_rss_bytes -= std::min(r.peak_rss_bytes, probe->bytes());
            // Host memory: a test with layers on a GPU reads them from the GPU's, so none there.
            if (probe && t.pp == 0 && t.tg > 0 && r.n_gpu_layers == 0) r.read_bytes_per_s = probe->bytes_per_second(t.threads);
            results.push_back(std::move(r));
        }
      }
    return results;
}

}  // namespace pocket::tools
