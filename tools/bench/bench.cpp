#include "bench.hpp"

#include "../common/flag_checks.hpp"

#include "kernels/kernels.hpp"
#include "pocket/context.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

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

double seconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// Every value in its range before any arithmetic with it (pp + tg + 1 must not overflow, nor
// a 2^31-token prompt be allocated); one line naming the flag when not.
static void check_bench_options(const BenchOptions& o) {
    for (int p : o.n_prompt) check_range("-p", p, 0, kMaxTokens);
    for (int n : o.n_gen) check_range("-n", n, 0, kMaxTokens);
    for (int t : o.threads) check_threads("-t", t);
    check_range("-b", o.n_batch, 1, kMaxTokens);
    check_range("-ub", o.n_ubatch, 1, kMaxTokens);
    check_range("-r", o.repetitions, 1, 1000000);
}

std::vector<BenchResult> run_bench(const BenchOptions& o) {
    check_bench_options(o);
    std::vector<BenchResult> results;
    std::mt19937 rng(42);
    for (const auto& path : o.models)
      for (const std::string& ngl : o.n_gpu_layers) {
        ModelLoadOptions load;
        load.gpu_layers = GpuLayers::parse(ngl);
        load.device = o.device;
        load.repack = o.repack;
        load.n_ubatch = static_cast<uint32_t>(o.n_ubatch);
        auto model = Model::load(path, load);
        if (!model->placement().warning.empty() && &ngl == &o.n_gpu_layers.front())
            fmt::print(stderr, "warning: {}\n", model->placement().warning);
        std::string backends;
        for (const Device* d : model->placement().devices) backends += (backends.empty() ? "" : ",") + std::string(d->name());
        const uint32_t n_vocab = model->hparams().n_vocab;
        for (int threads : o.threads) {
            struct Test { int pp, tg; };
            std::vector<Test> tests;
            for (int p : o.n_prompt) if (p > 0) tests.push_back({p, 0});
            for (int g : o.n_gen) if (g > 0) tests.push_back({0, g});
            for (const auto& t : tests) {
                BenchResult r;
                r.model_filename = path;
                r.model_type = fmt::format("{} {} {}", model->hparams().arch, size_class(model->n_params()), model->type_name());
                r.model_size = model->weight_bytes();
                r.model_n_params = model->n_params();
                r.isa = kernels::isa_name(kernels::active_isa());
                r.backends = backends;
                r.n_gpu_layers = static_cast<int>(model->placement().n_gpu_layers);
                r.n_threads = threads;
                r.n_prompt = t.pp;
                r.n_gen = t.tg;
                r.n_batch = o.n_batch;
                r.n_ubatch = o.n_ubatch;
                ContextOptions co;
                co.n_ctx = static_cast<uint32_t>(std::max(t.pp + t.tg + 1, 256));
                co.n_batch = static_cast<uint32_t>(o.n_batch);
                co.n_ubatch = static_cast<uint32_t>(o.n_ubatch);
                co.n_threads = threads;
                Context ctx(*model, co);
                // One warm-up run, not counted (page faults of the mapping, graph planning).
                for (int rep = -1; rep < o.repetitions; ++rep) {
                    ctx.clear();
                    const auto tokens = random_tokens(n_vocab, std::max(t.pp, t.tg), rng);
                    const auto t0 = std::chrono::steady_clock::now();
                    if (t.pp > 0) {
                        ctx.decode(tokens);
                    } else {
                        for (int i = 0; i < t.tg; ++i) ctx.decode(std::span<const TokenId>(&tokens[static_cast<size_t>(i)], 1));
                    }
                    const double s = seconds(t0);
                    if (rep >= 0) r.samples_ts.push_back((t.pp > 0 ? t.pp : t.tg) / s);
                }
                double sum = 0, sum2 = 0;
                for (double x : r.samples_ts) sum += x;
                r.avg_ts = sum / static_cast<double>(r.samples_ts.size());
                for (double x : r.samples_ts) sum2 += (x - r.avg_ts) * (x - r.avg_ts);
                r.stddev_ts = r.samples_ts.size() > 1 ? std::sqrt(sum2 / static_cast<double>(r.samples_ts.size() - 1)) : 0.0;
                if (o.progress)
                    fmt::print(stderr, "bench: {} t={} {}{}: {:.2f} t/s\n", path, threads, t.pp ? "pp" : "tg", t.pp ? t.pp : t.tg, r.avg_ts);
                results.push_back(std::move(r));
            }
        }
      }
    return results;
}

void print_bench(const std::vector<BenchResult>& results, const std::string& format, std::ostream& out) {
    auto test_name = [](const BenchResult& r) { return r.n_prompt ? fmt::format("pp{}", r.n_prompt) : fmt::format("tg{}", r.n_gen); };
    if (format == "json" || format == "jsonl") {
        const bool lines = format == "jsonl";  // llama-bench's -o jsonl: one object per line
        if (!lines) out << "[\n";
        for (size_t i = 0; i < results.size(); ++i) {
            const auto& r = results[i];
            std::string samples;
            for (size_t k = 0; k < r.samples_ts.size(); ++k) samples += fmt::format("{}{:.6f}", k ? ", " : "", r.samples_ts[k]);
            out << fmt::format(
                "{}{{\"model_filename\": \"{}\", \"model_type\": \"{}\", \"model_size\": {}, \"model_n_params\": {}, "
                "\"backends\": \"{}\", \"n_gpu_layers\": {}, \"cpu_isa\": \"{}\", \"n_threads\": {}, \"n_batch\": {}, \"n_ubatch\": {}, "
                "\"n_prompt\": {}, \"n_gen\": {}, \"avg_ts\": {:.6f}, \"stddev_ts\": {:.6f}, \"samples_ts\": [{}]}}{}\n",
                lines ? "" : "  ", r.model_filename, r.model_type, r.model_size, r.model_n_params, r.backends, r.n_gpu_layers, r.isa, r.n_threads, r.n_batch, r.n_ubatch,
                r.n_prompt, r.n_gen, r.avg_ts, r.stddev_ts, samples, !lines && i + 1 < results.size() ? "," : "");
        }
        if (!lines) out << "]\n";
    } else if (format == "csv") {
        out << "model_filename,model_type,model_size,model_n_params,backends,n_gpu_layers,cpu_isa,n_threads,n_prompt,n_gen,avg_ts,stddev_ts\n";
        for (const auto& r : results)
            out << fmt::format("\"{}\",\"{}\",{},{},\"{}\",{},{},{},{},{},{:.6f},{:.6f}\n", r.model_filename, r.model_type, r.model_size,
                               r.model_n_params, r.backends, r.n_gpu_layers, r.isa, r.n_threads, r.n_prompt, r.n_gen, r.avg_ts, r.stddev_ts);
    } else {
        out << "| model | size | params | backend | ngl | isa | threads | test | t/s |\n";
        out << "| --- | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: |\n";
        for (const auto& r : results)
            out << fmt::format("| {} | {:.2f} MiB | {:.2f} {} | {} | {} | {} | {} | {} | {:.2f} ± {:.2f} |\n", r.model_type,
                               static_cast<double>(r.model_size) / (1024.0 * 1024.0),
                               r.model_n_params >= 1000000000 ? static_cast<double>(r.model_n_params) / 1e9 : static_cast<double>(r.model_n_params) / 1e6,
                               r.model_n_params >= 1000000000 ? "B" : "M", r.backends, r.n_gpu_layers, r.isa, r.n_threads, test_name(r),
                               r.avg_ts, r.stddev_ts);
    }
}

}  // namespace pocket::tools
