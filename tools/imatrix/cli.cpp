// `imatrix`: llama-imatrix's flags. This file only parses and prints.
#include "../common/command_line.hpp"
#include "../common/devices.hpp"
#include "../common/duration_text.hpp"
#include "../common/flag_checks.hpp"
#include "imatrix_command.hpp"
#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <iostream>
#include <unistd.h>

int main(int argc, char** argv) {
    CLI::App app{"imatrix: an importance matrix for quantize --imatrix (llama-imatrix's method and files)"};
    pocket::tools::ImatrixOptions o;
    std::string ngl = "auto";
    bool no_mmap = false, no_ppl = false, verbose = false;
    app.add_option("-m,--model", o.model, "model file (F16 or F32, the one to quantize)");
    app.add_option("-f,--file", o.text, "text to run the model over")->check(CLI::ExistingFile);
    app.add_option("-o,--output-file", o.output, "where to write the matrix")->capture_default_str();
    app.add_option("--output-format", o.output_format, "gguf or dat (llama.cpp's legacy format; default: by the -o extension, else gguf)");
    app.add_option("--in-file", o.in_files, "imatrix files to add in (GGUF or .dat); repeatable; alone, they are only combined")
        ->check(CLI::ExistingFile);
    app.add_option("-c,--ctx-size", o.n_ctx, "tokens per chunk")->capture_default_str();
    app.add_option("--chunks", o.n_chunks, "evaluate at most this many chunks (-1: all)")->capture_default_str();
    app.add_option("-b,--batch-size", o.context.n_batch, "logical batch size (a batch holds -b / -c chunks)")->capture_default_str();
    app.add_option("--ubatch-size", o.context.n_ubatch, "physical batch size (-ub)")->capture_default_str();
    app.add_option("-t,--threads", o.context.n_threads, "threads (default: all hardware threads)");
    app.add_option("--threads-batch", o.context.n_threads_batch, "threads for the batches (default: as -t)");
    app.add_flag("--process-output", o.process_output, "collect output.weight too");
    app.add_flag("--no-ppl", no_ppl, "do not print the running perplexity");
    app.add_option("--n-gpu-layers", ngl, "layers on the GPU: N, all or auto (-ngl; default auto)");
    app.add_option("--device", o.load.device, "the GPU to use (-dev; see --list-devices)");
    app.add_flag("--no-mmap", no_mmap, "read the model into memory");
    bool list_devices = false;  // handled before parsing (below); declared so --help lists it
    app.add_flag("--list-devices", list_devices, "print the available devices and exit");
    app.add_flag("-v,--verbose", verbose, "log to stderr");
    pocket::tools::CommandLine cl("imatrix", argc, argv,
                                  {{"-ngl", "--n-gpu-layers"}, {"-ub", "--ubatch-size"}, {"-dev", "--device"}, {"-tb", "--threads-batch"}});
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--list-devices") {
            std::cout << pocket::tools::device_list();
            return 0;
        }
    if (auto rc = cl.parse(app)) return *rc;
    spdlog::set_default_logger(spdlog::stderr_color_st("pocket"));
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);
    try {
        if (!o.text.empty() && o.model.empty()) throw pocket::Error("-f needs a model (-m)");
        if (app.count("--threads")) pocket::tools::check_threads("-t", o.context.n_threads);
        if (app.count("--threads-batch")) pocket::tools::check_threads("-tb", o.context.n_threads_batch);
        pocket::tools::check_range("-c", o.n_ctx, 4, pocket::tools::kMaxTokens);
        pocket::tools::check_range("-b", o.context.n_batch, 1, pocket::tools::kMaxTokens);
        pocket::tools::check_range("-ub", o.context.n_ubatch, 1, pocket::tools::kMaxTokens);
        pocket::tools::check_range("--chunks", o.n_chunks, -1, INT32_MAX, "(-1: all)");
        o.load.use_mmap = !no_mmap;
        o.load.gpu_layers = pocket::GpuLayers::parse(ngl);
        o.load.progress = pocket::tools::load_progress(stderr);
        pocket::remove_temporaries_on_signals();
        const bool tty = ::isatty(2);
        bool status_line = false;
        const auto t_start = std::chrono::steady_clock::now();
        const auto r = pocket::tools::run_imatrix(o, [&](size_t k, size_t n, double ppl, const pocket::tools::KlStats::Chunk*) {
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
            const double eta = elapsed / static_cast<double>(k) * static_cast<double>(n - k);
            if (!no_ppl) {
                fmt::print("[{}]{:.4f},", k, ppl);
                std::fflush(stdout);
            }
            // A batch of -b / -c chunks reports its chunks at once: the ETA settles after the first.
            // On a terminal a status line; in a log a line per tenth of the chunks.
            if (tty) {
                fmt::print(stderr, "\rimatrix: chunk {}/{}, ETA {}   ", k, n, pocket::tools::duration_text(eta));
                status_line = true;
            } else if (k * 10 / n != (k - 1) * 10 / n) {
                fmt::print(stderr, "imatrix: chunk {}/{}, ETA {}\n", k, n, pocket::tools::duration_text(eta));
            }
        });
        if (status_line) fmt::print(stderr, "\n");
        if (r.n_chunks_evaluated && !no_ppl) fmt::print("\nFinal estimate: PPL = {:.4f}\n", r.ppl);
        fmt::print(stderr, "imatrix: {} entries over {} chunks of {} written to {} ({})\n", r.n_entries, r.chunk_count, o.n_ctx, o.output,
                   r.dat ? "legacy .dat" : "GGUF");
        return 0;
    } catch (const pocket::Error& e) {
        std::cerr << "imatrix: " << e.what() << "\n";
        return 1;
    }
}
