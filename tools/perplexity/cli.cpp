// `perplexity`: llama-perplexity's flags and output. This file only parses and prints.
#include "../common/command_line.hpp"
#include "../common/devices.hpp"
#include "../common/duration_text.hpp"
#include "../common/flag_checks.hpp"
#include "kl_summary.hpp"
#include "perplexity.hpp"
#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <unistd.h>

int main(int argc, char** argv) {
    CLI::App app{"perplexity: perplexity and KL divergence of a model on a text (llama-perplexity's method)"};
    std::string model_path, text_path, kl_base, ctk = "f16", ctv = "f16";
    pocket::tools::PerplexityOptions o;
    pocket::ContextOptions c;
    bool kl = false, json = false, no_mmap = false, verbose = false;
    std::string ngl = "auto", device;
    bool no_repack = false, list_devices = false;
    app.add_option("-m,--model", model_path, "model file")->required();
    app.add_option("-f,--file", text_path, "text file")->required()->check(CLI::ExistingFile);
    app.add_option("-c,--ctx-size", o.n_ctx, "tokens per chunk")->capture_default_str();
    app.add_option("-b,--batch-size", c.n_batch, "logical batch size")->capture_default_str();
    app.add_option("--ubatch-size", c.n_ubatch, "physical batch size (-ub)")->capture_default_str();
    app.add_option("--chunks", o.n_chunks, "evaluate at most this many chunks (-1: all)")->capture_default_str();
    app.add_option("-t,--threads", c.n_threads, "threads (default: all hardware threads)");
    app.add_option("--threads-batch", c.n_threads_batch, "threads for the batches (default: as -t)");
    std::string flash_attn = "auto";
    app.add_option("--flash-attn", flash_attn, "on, off or auto (-fa; off: scores, softmax and values as separate ops)");
    app.add_option("--cache-type-k", ctk, "KV cache type for K: f32, f16, q8_0 (-ctk)")->capture_default_str();
    app.add_option("--cache-type-v", ctv, "KV cache type for V: f32, f16, q8_0 (-ctv)")->capture_default_str();
    app.add_option("--kl-divergence-base", kl_base, "file of the base model's log-probabilities: written, or read with --kl-divergence");
    app.add_flag("--kl-divergence", kl, "compare with the base file: KL divergence, delta-p, same top token");
    app.add_flag("--json", json, "print the final figures as JSON on stdout");
    app.add_flag("--no-mmap", no_mmap, "read the model into memory");
    app.add_option("--n-gpu-layers", ngl, "layers on the GPU: N, all or auto (-ngl; default auto)");
    app.add_option("--device", device, "the GPU to use (-dev; see --list-devices)");
    app.add_flag("--list-devices", list_devices, "print the available devices and exit");
    app.add_flag("--no-repack", no_repack, "keep every weight in the file's layout");
    app.add_flag("-v,--verbose", verbose, "log to stderr");
    pocket::tools::CommandLine cl("perplexity", argc, argv,
                                  {{"-ngl", "--n-gpu-layers"}, {"-ub", "--ubatch-size"}, {"-ctk", "--cache-type-k"},
                                   {"-ctv", "--cache-type-v"}, {"-dev", "--device"}, {"-tb", "--threads-batch"},
                                   {"-fa", "--flash-attn"}});
    for (int i = 1; i < argc; ++i)  // before the required flags are checked, as llama.cpp does
        if (std::string_view(argv[i]) == "--list-devices") {
            std::cout << pocket::tools::device_list();
            return 0;
        }
    if (auto rc = cl.parse(app)) return *rc;
    spdlog::set_default_logger(spdlog::stderr_color_st("pocket"));
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
    try {
        if (kl && kl_base.empty()) throw pocket::Error("--kl-divergence needs --kl-divergence-base FILE");
        if (app.count("--threads")) pocket::tools::check_threads("-t", c.n_threads);
        if (app.count("--threads-batch")) pocket::tools::check_threads("-tb", c.n_threads_batch);
        c.flash_attn = !pocket::tools::flash_attn_off(flash_attn);
        pocket::tools::check_range("-c", o.n_ctx, 4, pocket::tools::kMaxTokens);
        pocket::tools::check_range("-b", c.n_batch, 1, pocket::tools::kMaxTokens);
        pocket::tools::check_range("-ub", c.n_ubatch, 1, pocket::tools::kMaxTokens);
        pocket::tools::check_range("--chunks", o.n_chunks, -1, INT32_MAX, "(-1: all)");
        (kl ? o.kl_base_in : o.kl_base_out) = kl_base;
        // Before any work: the base file must not be the model or the text, and its
        // temporary is made now, so that a file that cannot be written fails at once.
        std::unique_ptr<pocket::tools::KlBaseWriter> kl_writer;
        if (!o.kl_base_out.empty()) {
            pocket::check_output_file(o.kl_base_out, {model_path, text_path});
            pocket::remove_temporaries_on_signals();
            kl_writer = std::make_unique<pocket::tools::KlBaseWriter>(o.kl_base_out);
            o.kl_writer = kl_writer.get();
        }
        auto type = [](const std::string& n) {
            auto t = pocket::ggml_type_from_name(n);
            if (!t) throw pocket::Error("unknown KV cache type '{}'", n);
            return *t;
        };
        c.type_k = type(ctk);
        c.type_v = type(ctv);
        pocket::tools::fit_chunks_to_batch(o, c);
        pocket::ModelLoadOptions load;
        load.use_mmap = !no_mmap;
        load.repack = !no_repack;
        load.gpu_layers = pocket::GpuLayers::parse(ngl);
        load.device = device;
        load.n_ctx = c.n_ctx;
        load.n_ubatch = c.n_ubatch;
        load.n_threads = c.n_threads;
        load.progress = pocket::tools::load_progress(stderr);
        auto model = pocket::Model::load(model_path, load);
        pocket::tools::warn_context_size(*model, o.n_ctx, stderr);
        pocket::Context ctx(*model, c);
        pocket::tools::report_placement(*model, ctx, stderr);
        std::ifstream in(text_path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        const auto tokens = pocket::tools::perplexity_tokens(*model, ss.str());
        const bool tty = ::isatty(2);
        fmt::print(stderr, "perplexity: {} tokens, {} chunks of {}, {} per batch\n", tokens.size(), tokens.size() / o.n_ctx,
                   o.n_ctx, o.n_seq);
        // On a terminal: when the chunk values share it (stdout is that terminal too), the ETA
        // is one line after the first chunk, as llama-perplexity prints it, so that no "\r"
        // overwrites the values; otherwise a status line with the chunk and the ETA.
        const bool values_on_terminal = !json && ::isatty(1);
        bool status_line = false;
        const auto t_start = std::chrono::steady_clock::now();
        const auto r = pocket::tools::compute_perplexity(ctx, tokens, o, [&](size_t k, size_t n, double ppl, const pocket::tools::KlStats::Chunk* kl_row) {
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
            const double eta = elapsed / static_cast<double>(k) * static_cast<double>(n - k);
            if (tty && values_on_terminal && k == 1)
                fmt::print(stderr, "perplexity: {:.2f} s per chunk, ETA {}\n", elapsed, pocket::tools::duration_text(eta));
            if (!json && kl_row) {  // llama-perplexity's KL table, a row per chunk as it is done
                if (k == 1) pocket::tools::print_kl_chunk_header(stdout);
                pocket::tools::print_kl_chunk_row(k, *kl_row, stdout);
            } else if (!json) {
                fmt::print("[{}]{:.4f},", k, ppl);
                std::fflush(stdout);
            }
            if (tty && !values_on_terminal) {
                fmt::print(stderr, "\rperplexity: chunk {}/{}, ETA {}   ", k, n, pocket::tools::duration_text(eta));
                status_line = true;
            }
        });
        if (status_line) fmt::print(stderr, "\n");
        const double tps = static_cast<double>(r.n_chunks * o.n_ctx) / r.seconds;
        if (json) {
            fmt::print("{{\"model\": \"{}\", \"n_ctx\": {}, \"n_chunks\": {}, \"n_tokens\": {}, \"ppl\": {:.6f}, \"ppl_stderr\": {:.6f}, "
                       "\"tokens_per_second\": {:.2f}",
                       model_path, o.n_ctx, r.n_chunks, r.n_tokens, r.ppl, r.ppl_stderr, tps);
            if (r.kl)
                fmt::print(", \"kld_mean\": {:.6g}, \"kld_stderr\": {:.6g}, \"kld_max\": {:.6g}, \"delta_p_mean\": {:.6g}, "
                           "\"delta_p_stderr\": {:.6g}, \"delta_p_rms\": {:.6g}, \"same_top_p\": {:.6f}, \"base_ppl\": {:.6f}",
                           r.kl->kld_mean, r.kl->kld_stderr, r.kl->kld_max, r.kl->dp_mean, r.kl->dp_stderr, r.kl->dp_rms,
                           r.kl->same_top, r.kl->base_ppl);
            fmt::print("}}\n");
        } else {
            fmt::print("\nFinal estimate: PPL = {:.4f} +/- {:.5f}\n", r.ppl, r.ppl_stderr);
            if (r.kl) {
                fmt::print("Mean    KLD: {:10.6f} +/- {:.6f}\n", r.kl->kld_mean, r.kl->kld_stderr);
                fmt::print("Maximum KLD: {:10.6f}\n", r.kl->kld_max);
                fmt::print("Mean    Δp: {:+10.3f} +/- {:.3f} %\n", 100 * r.kl->dp_mean, 100 * r.kl->dp_stderr);
                fmt::print("RMS     Δp: {:10.3f} %\n", 100 * r.kl->dp_rms);
                fmt::print("Same top p: {:10.3f} %\n", 100 * r.kl->same_top);
                fmt::print("Base   PPL: {:10.4f}\n", r.kl->base_ppl);
                // llama-perplexity's statistics too (its table came chunk by chunk), for comparing runs of both tools.
                pocket::tools::print_kl_statistics(*r.kl, stdout);
            }
        }
        fmt::print(stderr, "perplexity: {:.2f} s, {:.2f} tokens per second\n", r.seconds, tps);
        return 0;
    } catch (const pocket::Error& e) {
        std::cerr << "perplexity: " << e.what() << "\n";
        return 1;
    }
}
