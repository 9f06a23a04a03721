// `serve`: an OpenAI-compatible HTTP server. llama-server's flags; this file only parses them
// and waits for SIGINT / SIGTERM.
#include "../common/command_line.hpp"
#include "../common/flag_checks.hpp"
#include "pocket/error.hpp"
#include "server.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <pthread.h>
#include <sys/resource.h>

namespace {

void check_flags(const pocket::serve::ServeOptions& o, const CLI::App& app, int threads) {
    using namespace pocket::tools;
    check_range("--port", o.port, 0, 65535, "(0: any free port)");
    check_range("-np", o.n_parallel, 1, 256);
    check_range("-c", o.n_ctx, 0, kMaxTokens, "(0: the model's)");
    check_range("-b", o.context.n_batch, 1, kMaxTokens);
    check_range("-ub", o.context.n_ubatch, 1, kMaxTokens);
    if (app.count("--threads")) check_threads("-t", threads);
    check_range("--threads-http", o.http_threads, 0, kMaxThreads, "(0: automatic)");
    if (!(o.queue_timeout_s > 0 && o.queue_timeout_s <= 86400))
        throw pocket::Error("--queue-timeout {}: must be between 0 and 86400 seconds", o.queue_timeout_s);
    check_range("--max-body", static_cast<int64_t>(o.max_body_bytes), 1024, int64_t{1} << 30);
}

std::string bundled_model() {
    if (std::filesystem::exists("models/stories260K.gguf")) return "models/stories260K.gguf";
    return POCKET_BUNDLED_MODEL;
}

}  // namespace

int main(int argc, char** argv) {
    pocket::serve::ServeOptions o;
    CLI::App app{"serve: an OpenAI-compatible HTTP server for a GGUF model (llama-server's flags)"};
    app.get_formatter()->column_width(36);
    int threads = 0;
    bool no_mmap = false;
    int64_t max_body = static_cast<int64_t>(o.max_body_bytes);

    app.add_option("-m,--model", o.model, "model file (default: the bundled models/stories260K.gguf)")->group("Model");
    app.add_option("--alias", o.alias, "the model's name in responses (default: the file name)")->group("Model");
    app.add_flag("--no-mmap", no_mmap, "read the model into memory instead of mapping it")->group("Model");
    app.add_option("--n-gpu-layers,--gpu-layers", o.n_gpu_layers, "layers on the GPU: N, all or auto (-ngl; default auto)")->group("Model");
    app.add_option("--device", o.load.device, "the GPU to use (-dev)")->group("Model");
    app.add_option("--chat-template", o.chat_template, "a built-in template name or a Jinja file (default: the model's)")->group("Model");

    app.add_option("--host", o.host, "address to listen on")->group("Server")->capture_default_str();
    app.add_option("--port", o.port, "port to listen on (0: any free port)")->group("Server")->capture_default_str();
    app.add_option("--api-key", o.api_key, "require \"Authorization: Bearer KEY\"")->group("Server");
    app.add_option("--threads-http", o.http_threads, "HTTP threads, one per open connection (0: 1024)")->group("Server");
    app.add_option("--queue-timeout", o.queue_timeout_s, "seconds a request waits for a free slot before 503")->group("Server")->capture_default_str();
    app.add_option("--max-body", max_body, "largest request body in bytes (larger: 413)")->group("Server")->capture_default_str();

    app.add_option("-c,--ctx-size", o.n_ctx, "context size, split among the slots (0: the model's, at most 4096)")->group("Performance");
    app.add_option("--parallel", o.n_parallel, "slots: requests served at once (-np)")->group("Performance")->capture_default_str();
    app.add_option("-t,--threads", threads, "threads (default: all hardware threads)")->group("Performance");
    app.add_option("-b,--batch-size", o.context.n_batch, "prompt tokens a slot evaluates per step at most")->group("Performance")->capture_default_str();
    app.add_option("--ubatch-size", o.context.n_ubatch, "physical batch size (-ub)")->group("Performance")->capture_default_str();
    app.add_flag("-v,--verbose", o.verbose, "log to stderr")->group("Output");

    pocket::tools::CommandLine cl("serve", argc, argv,
                                  {{"-ngl", "--n-gpu-layers"}, {"-np", "--parallel"}, {"-ub", "--ubatch-size"}, {"-dev", "--device"}},
                                  {"--jinja", "--metrics", "-cb", "--cont-batching"});
    if (auto rc = cl.parse(app)) return *rc;
    spdlog::set_default_logger(spdlog::stderr_color_mt("pocket"));
    spdlog::set_level(o.verbose ? spdlog::level::debug : spdlog::level::warn);

    // Signals are taken by sigwait below, never by a handler running inside a request; every
    // thread started from here on inherits the mask. A client that leaves mid-answer must not
    // kill the server with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    // Each open connection is a file descriptor: allow as many as the hard limit does.
    if (rlimit lim{}; ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
    }

    try {
        o.max_body_bytes = static_cast<size_t>(std::max<int64_t>(max_body, 0));
        check_flags(o, app, threads);
        if (o.model.empty()) o.model = bundled_model();
        o.load.use_mmap = !no_mmap;
        o.load.gpu_layers = pocket::GpuLayers::parse(o.n_gpu_layers);
        o.load.n_threads = threads;
        o.load.n_ubatch = o.context.n_ubatch;
        o.load.n_ctx = o.n_ctx;
        o.context.n_threads = threads;

        pocket::serve::Server server(o);
        server.start();
        server.load();  // /health says 503 until here; a signal meanwhile waits for sigwait
        // One line, once ready: an error while loading stays the only line printed.
        fmt::print(stderr, "serve: listening on http://{}:{} ({}, {} slot(s) of {} tokens)\n", o.host, server.port(), o.model,
                   o.n_parallel, server.slot_context());
        std::fflush(stderr);
        int sig = 0;
        sigwait(&stop_signals, &sig);
        fmt::print(stderr, "serve: {}, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
        server.stop();
        return 0;
    } catch (const pocket::Error& e) {
        return cl.error(e.what());
    } catch (const std::exception& e) {
        return cl.error(e.what());
    }
}
