// `run`: generate text with a model. llama.cpp's flags; this file only parses them.
#include "../common/command_line.hpp"
#include "../common/devices.hpp"
#include "../common/flag_checks.hpp"
#include "pocket/error.hpp"
#include "run_options.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <random>
#include <thread>

namespace {

pocket::GgmlType cache_type(const std::string& name) {
    auto t = pocket::ggml_type_from_name(name);
    if (!t || (*t != pocket::GgmlType::F32 && *t != pocket::GgmlType::F16 && *t != pocket::GgmlType::Q8_0))
        throw CLI::ValidationError("cache type", "'" + name + "' is not one of f32, f16, q8_0");
    return *t;
}

// Each value in its range before any work; one line naming the flag when not.
void check_flags(const pocket::tools::RunOptions& o, const CLI::App& app, int threads) {
    using namespace pocket::tools;
    check_range("-n", o.n_predict, -1, kMaxTokens, "(-1: until the end)");
    if (app.count("--threads")) check_threads("-t", threads);  // not given: all hardware threads
    check_range("-c", o.context.n_ctx, 0, kMaxTokens, "(0: the model's)");
    check_range("-b", o.context.n_batch, 1, kMaxTokens);
    check_range("-ub", o.context.n_ubatch, 1, kMaxTokens);
    const auto& s = o.sampling;
    check_finite("--temp", s.temperature);
    check_probability("--top-p", s.top_p);
    check_probability("--min-p", s.min_p);
    check_probability("--typical", s.typical_p);
    check_finite("--repeat-penalty", s.repeat_penalty);
    check_finite("--frequency-penalty", s.frequency_penalty);
    check_finite("--presence-penalty", s.presence_penalty);
    check_range("--repeat-last-n", s.repeat_last_n, -1, kMaxTokens, "(-1: the whole context)");
    check_range("--keep", o.chat.keep, -1, kMaxTokens, "(-1: the system prompt and the first message)");
}

}  // namespace

int main(int argc, char** argv) {
    pocket::tools::RunOptions o;
    CLI::App app{"run: generate text with a GGUF model (llama.cpp's flags)"};
    app.get_formatter()->column_width(36);
    int64_t seed = -1;
    int threads = 0;
    std::string ctk = "f16", ctv = "f16";
    bool no_mmap = false, no_repack = false, list_devices = false;

    app.add_option("-m,--model", o.model, "model file (default: the bundled models/stories260K.gguf)")->group("Model");
    app.add_flag("--no-mmap", no_mmap, "read the model into memory instead of mapping it")->group("Model");
    app.add_flag("--mlock", o.load.mlock, "keep the model in RAM (mlock)")->group("Model");
    app.add_option("--n-gpu-layers,--gpu-layers", o.n_gpu_layers, "layers on the GPU: N, all or auto (-ngl; default auto)")
        ->group("Model");
    app.add_option("--device", o.load.device, "the GPU to use (-dev; see --list-devices)")->group("Model");
    app.add_flag("--list-devices", list_devices, "print the available devices and exit")->group("Model");
    app.add_flag("--no-repack", no_repack, "keep every weight in the file's layout")->group("Model");
    app.add_option("--override-kv", o.load.kv_overrides, "KEY=TYPE:VALUE: a metadata value replaced (TYPE int, float, bool or str; repeatable)")
        ->group("Model")->allow_extra_args(false);

    app.add_option("-p,--prompt", o.prompt, "prompt (default: \"Once upon a time\")")->group("Prompt");
    app.add_option("-f,--file", o.prompt_file, "read the prompt from a file")->group("Prompt")->check(CLI::ExistingFile);
    app.add_flag("-e,--escape", o.escape, "process escapes (\\n, \\t, \\xHH ...) in the prompt (the default)")->group("Prompt");
    app.add_flag("!--no-escape", o.escape, "do not process escapes")->group("Prompt");
    app.add_flag("!--no-display-prompt", o.display_prompt, "do not print the prompt")->group("Prompt");
    app.add_option("-n,--n-predict", o.n_predict, "tokens to generate (-1: until EOS or the end of the context)")
        ->group("Prompt")->capture_default_str();

    app.add_option("-t,--threads", threads, "threads (default: all hardware threads)")->group("Performance");
    int threads_batch = 0;
    app.add_option("--threads-batch", threads_batch, "threads for prompt batches (default: as -t)")->group("Performance");
    std::string flash_attn = "auto";
    app.add_option("--flash-attn", flash_attn, "on, off or auto (-fa; off: scores, softmax and values as separate ops)")->group("Performance");
    app.add_option("-c,--ctx-size", o.context.n_ctx, "context size (0: the model's, at most 4096)")->group("Performance");
    app.add_option("-b,--batch-size", o.context.n_batch, "logical batch size")->group("Performance")->capture_default_str();
    app.add_option("--ubatch-size", o.context.n_ubatch, "physical batch size (-ub)")->group("Performance")->capture_default_str();
    app.add_option("--cache-type-k", ctk, "KV cache type for K: f32, f16, q8_0 (-ctk)")->group("Performance")->capture_default_str();
    app.add_option("--cache-type-v", ctv, "KV cache type for V: f32, f16, q8_0 (-ctv)")->group("Performance")->capture_default_str();

    auto& s = o.sampling;
    app.add_option("-s,--seed", seed, "random seed (-1: random)")->group("Sampling")->capture_default_str();
    app.add_option("--temp", s.temperature, "temperature (0: greedy)")->group("Sampling")->capture_default_str();
    app.add_option("--top-k", s.top_k, "top-k (0: off)")->group("Sampling")->capture_default_str();
    app.add_option("--top-p", s.top_p, "top-p (1: off)")->group("Sampling")->capture_default_str();
    app.add_option("--min-p", s.min_p, "min-p (0: off)")->group("Sampling")->capture_default_str();
    app.add_option("--typical", s.typical_p, "locally typical sampling p (1: off)")->group("Sampling")->capture_default_str();
    app.add_flag("--ignore-eos", o.ignore_eos, "never end at an end-of-generation token")->group("Sampling");
    app.add_option("--repeat-penalty", s.repeat_penalty, "repeat penalty (1: off)")->group("Sampling")->capture_default_str();
    app.add_option("--repeat-last-n", s.repeat_last_n, "tokens the penalties look back at (0: off, -1: all)")
        ->group("Sampling")->capture_default_str();
    app.add_option("--frequency-penalty", s.frequency_penalty, "frequency penalty (0: off)")->group("Sampling");
    app.add_option("--presence-penalty", s.presence_penalty, "presence penalty (0: off)")->group("Sampling");

    app.add_flag("-i,--interactive,--conversation", o.interactive, "chat (-cnv too)")->group("Chat");
    app.add_option("--system-prompt", o.chat.system_prompt, "system prompt of the chat (-sys)")->group("Chat");
    app.add_option("-r,--reverse-prompt", o.chat.reverse_prompts, "stop the answer when this text appears")->group("Chat");
    app.add_option("--keep", o.chat.keep, "tokens kept at the start on a context shift, after the system prompt (-1: the first message too)")
        ->group("Chat");
    app.add_option("--in-prefix", o.in_prefix, "text put before each chat message")->group("Chat");
    app.add_option("--in-suffix", o.in_suffix, "text put after each chat message")->group("Chat");
    app.add_flag("!--no-context-shift", o.chat.context_shift, "stop when the context is full instead of shifting it")->group("Chat");
    std::string builtin_names;
    for (const auto& n : pocket::builtin_chat_template_names()) builtin_names += (builtin_names.empty() ? "" : ", ") + n;
    app.add_option("--chat-template", o.chat_template, "a Jinja file, or a built-in template: " + builtin_names)->group("Chat");
    app.add_option("--render-chat", o.render_chat, "print the prompt a chat JSON file renders to, and exit")
        ->group("Chat")->check(CLI::ExistingFile);

    app.add_flag("--color", o.color, "colour the prompt apart from the generated text")->group("Output");
    app.add_flag("-v,--verbose", o.verbose, "log to stderr")->group("Output");

    app.add_flag("--single-turn", o.single_turn, "chat for one message and its answer, then leave (-st)")->group("Chat");
    bool no_conversation = false;
    app.add_flag("--no-conversation", no_conversation, "no chat, even when -i or -cnv came before (-no-cnv)")->group("Chat");
    // --jinja: accepted, pocket's templates are always Jinja.
    pocket::tools::CommandLine cl("run", argc, argv,
                                  {{"-ngl", "--n-gpu-layers"}, {"-ub", "--ubatch-size"}, {"-ctk", "--cache-type-k"},
                                   {"-ctv", "--cache-type-v"}, {"-cnv", "--conversation"}, {"-no-cnv", "--no-conversation"},
                                   {"-st", "--single-turn"}, {"-fa", "--flash-attn"}, {"-tb", "--threads-batch"},
                                   {"-sys", "--system-prompt"}, {"-dev", "--device"}},
                                  {"--jinja"});
    if (auto rc = cl.parse(app)) return *rc;
    auto logger = spdlog::stderr_color_st("pocket");
    spdlog::set_default_logger(logger);
    spdlog::set_level(o.verbose ? spdlog::level::debug : spdlog::level::warn);
    try {
        if (list_devices) {
            std::cout << pocket::tools::device_list();
            return 0;
        }
        check_flags(o, app, threads);
        o.context.flash_attn = !pocket::tools::flash_attn_off(flash_attn);
        if (app.count("--threads-batch")) pocket::tools::check_threads("-tb", threads_batch);
        o.prompt_given = app.count("--prompt") > 0;
        o.seed_given = seed >= 0;
        if (o.single_turn) o.interactive = true;  // llama.cpp: -st is a chat of one turn
        if (no_conversation) o.interactive = false;
        o.load.use_mmap = !no_mmap;
        o.load.repack = !no_repack;
        o.load.gpu_layers = pocket::GpuLayers::parse(o.n_gpu_layers);
        o.load.n_ctx = o.context.n_ctx;
        o.load.n_ubatch = o.context.n_ubatch;
        o.load.n_threads = threads;
        o.context.n_threads = threads;
        o.context.n_threads_batch = threads_batch;  // 0: as -t
        o.context.type_k = cache_type(ctk);
        o.context.type_v = cache_type(ctv);
        o.sampling.seed = seed < 0 ? std::random_device{}() : static_cast<uint64_t>(seed);
        o.chat.n_predict = o.n_predict;
        if (!o.render_chat.empty()) return pocket::tools::run_render_chat(o, stdout);
        if (o.interactive) return pocket::tools::run_interactive(o, stdout, stderr);
        return pocket::tools::run_generation(o, stdout, stderr);
    } catch (const pocket::Error& e) {
        std::cerr << "run: " << e.what() << "\n";
    } catch (const CLI::ValidationError& e) {
        std::cerr << "run: " << e.what() << "\n";
    }
    return 1;
}
