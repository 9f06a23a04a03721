#pragma once
// What every tool's command line shares: llama.cpp's habits on top of CLI11, in one place so
// that each cli.cpp only declares its flags.
// - A repeated flag takes its last value, as llama.cpp does (wrapper scripts append flags).
// - llama.cpp's multi-letter short flags (-ngl, -ub, ...) are rewritten to their long forms
//   (CLI11 takes one letter after a single dash and would split "-fa" into -f a); an "-x=value"
//   form too. A llama.cpp flag the tool lacks is named as such, never split into letters.
// - Every argument error is one line "TOOL: ...", exit 1; a misspelt flag gets the nearest
//   valid one ("did you mean --temp?").
#include "help_format.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <initializer_list>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifndef POCKET_VERSION
#define POCKET_VERSION "unknown"
#endif

namespace pocket::tools {

// An argument the tool cannot take: reported as "TOOL: message".
class FlagError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct FlagAlias {
    std::string_view short_form;  // "-ngl"
    std::string_view long_form;   // "--n-gpu-layers"
};

// llama.cpp's flags (common/arg.cpp, llama-bench, llama-quantize) that no pocket tool has. A
// flag listed here that a tool does have is the tool's, of course.
inline constexpr std::string_view kLlamaCppFlags[] = {
    "-C", "-Cr", "-Cb", "-Crb", "--cpu-mask", "--cpu-range", "--cpu-strict", "--prio", "--poll", "--cpu-mask-batch",
    "--cpu-range-batch", "--cpu-strict-batch", "--prio-batch", "--poll-batch", "-lcs", "--lookup-cache-static", "-lcd",
    "--lookup-cache-dynamic", "--swa-full", "-fa", "--flash-attn", "--no-perf", "-sysf", "--system-prompt-file", "--in-file",
    "-bf", "--binary-file", "-ptc", "--print-token-count", "--prompt-cache", "--prompt-cache-all", "--prompt-cache-ro", "-sp",
    "--special", "-no-cnv", "--no-conversation", "-st", "--single-turn", "-if", "--interactive-first", "-mli",
    "--multiline-input", "--in-prefix-bos", "--in-prefix", "--in-suffix", "--no-warmup", "--spm-infill", "--samplers",
    "--sampling-seq", "--sampler-seq", "--top-nsigma", "--xtc-probability", "--xtc-threshold", "--dry-multiplier",
    "--dry-base", "--dry-allowed-length", "--dry-penalty-last-n", "--dry-sequence-breaker", "--dynatemp-range",
    "--dynatemp-exp", "--mirostat", "--mirostat-lr", "--mirostat-ent", "-l", "--logit-bias", "--grammar", "--grammar-file",
    "-j", "--json-schema", "-jf", "--json-schema-file", "--pooling", "--attention", "--rope-scaling", "--rope-scale",
    "--rope-freq-base", "--rope-freq-scale", "--yarn-orig-ctx", "--yarn-ext-factor", "--yarn-attn-factor",
    "--yarn-beta-slow", "--yarn-beta-fast", "-nkvo", "--no-kv-offload", "-dt", "--defrag-thold", "-np", "--parallel",
    "-ns", "--sequences", "-cb", "--cont-batching", "-nocb", "--no-cont-batching", "--mmproj", "-mmu", "--mmproj-url",
    "--no-mmproj", "--no-mmproj-offload", "--image", "--numa", "-ot", "--override-tensor", "-sm", "--split-mode", "-ts",
    "--tensor-split", "-mg", "--main-gpu", "--check-tensors", "--override-kv", "--no-op-offload", "--lora",
    "--lora-scaled", "--control-vector", "--control-vector-scaled", "--control-vector-layer-range", "-mu", "--model-url",
    "-hf", "-hfr", "--hf-repo", "-hfd", "-hfrd", "--hf-repo-draft", "-hff", "--hf-file", "-hfv", "-hfrv",
    "--hf-repo-v", "-hffv", "--hf-file-v", "-hft", "--hf-token", "--context-file", "--chunk-size", "--chunk-separator",
    "--junk", "--pos", "-ofreq", "--output-frequency", "--output-format", "--save-frequency", "--process-output",
    "--no-ppl", "--chunk", "-pps", "-dkvc", "--dump-kv-cache", "-ctkd", "-ctvd", "-md", "--model-draft", "-ngld",
    "-devd", "-td", "-tbd", "-cd", "--draft-max", "--draft-min", "--draft-p-min", "-lv", "--verbosity",
    "--log-verbosity", "--log-file", "--log-colors", "--log-prefix", "--log-timestamps", "-gan", "--grp-attn-n", "-gaw",
    "--grp-attn-w", "-kvu", "-cmoe", "--cpu-moe", "-ncmoe", "--n-cpu-moe", "-tb", "--threads-batch", "--hellaswag",
    "--hellaswag-tasks", "--winogrande", "--winogrande-tasks", "--multiple-choice", "--multiple-choice-tasks",
    "--ppl-stride", "--ppl-output-type", "-pg", "-d", "--n-depth", "-mmp", "--mmap", "-embd", "--embeddings", "-rpc",
    "--rpc", "-oe", "--output-err", "--delay", "-nr", "--no-warmup", "--tensor-type", "--dry-run", "--keep-split",
    "--include-weights", "--exclude-weights", "--override-kv", "--prune-layers", "--no-escape", "--in-prefix",
    "--reasoning-format", "--reasoning-budget", "--chat-template-file", "--chat-template-kwargs", "--no-jinja",
    "--escape", "-dio", "--display-prompt", "--simple-io", "--no-display-prompt", "-to", "--timeout", "--host", "--port",
    "-a", "--alias", "--api-key", "--api-key-file", "--embedding", "--reranking", "--rerank", "--verbose-prompt",
    "--cache-reuse", "--context-shift", "--top-n-sigma", "-cram", "--cache-ram", "--offline", "--props", "--slots",
    "--metrics", "--no-webui", "--path", "-kvo", "--kv-offload", "--repack", "-nr", "--no-repack-weights",
    "-fit", "--fit", "--no-host", "-cmoe", "--override-tensor-draft", "-otd", "--lora-init-without-apply",
    "--spec-replace", "--draft", "--draft-n", "-mlr", "--min-keep", "--log-verbose", "-lv", "--in-prefix-bos",
    "--multiline-input", "--ctx-checkpoints", "-ctxcp", "--swa-checkpoints"};

class CommandLine {
public:
    // `tool` prefixes every message; `aliases` are this tool's llama.cpp short forms;
    // `accepted` are llama.cpp flags taken and ignored (they ask for what pocket always does).
    CommandLine(std::string tool, int argc, char** argv, std::initializer_list<FlagAlias> aliases = {},
                std::initializer_list<std::string_view> accepted = {})
        : tool_(std::move(tool)), aliases_(aliases), accepted_(accepted.begin(), accepted.end()) {
        args_.assign(argv, argv + argc);
        accepted_.emplace_back("--log-disable");  // pocket logs nothing unless -v
    }

    // Parses into `app`. Returns the exit code to leave with (0 after --help or --version, 1
    // after an error, printed here) or nullopt to go on.
    std::optional<int> parse(CLI::App& app) {
        take_last(app);
        set_formatter(app);
        if (!args_.empty())
            args_.erase(std::remove_if(args_.begin() + 1, args_.end(),
                                       [&](const std::string& a) {
                                           return !find(app, a) && std::find(accepted_.begin(), accepted_.end(), a) != accepted_.end();
                                       }),
                        args_.end());
        try {
            if (std::find(args_.begin(), args_.end(), "--version") != args_.end()) {
                std::cout << tool_ << " (pocket) " << POCKET_VERSION << "\n";
                return 0;
            }
            rewrite(app);
            std::vector<char*> ptrs;
            for (auto& a : args_) ptrs.push_back(a.data());
            app.parse(static_cast<int>(ptrs.size()), ptrs.data());
        } catch (const CLI::CallForHelp& e) {
            return app.exit(e);
        } catch (const CLI::CallForAllHelp& e) {
            return app.exit(e);
        } catch (const CLI::ParseError& e) {
            return error(e.what());
        } catch (const FlagError& e) {
            return error(e.what());
        }
        return std::nullopt;
    }

    // For errors found after parsing: "TOOL: message", one line.
    int error(std::string message) const {
        std::replace(message.begin(), message.end(), '\n', ' ');
        std::cerr << tool_ << ": " << message << "\n";
        return 1;
    }

private:
    // A repeated option takes its last value; lists (-p 128,512 -r A -r B) keep every value.
    static void take_last(CLI::App& app) {
        for (CLI::Option* o : app.get_options())
            if (o->nonpositional() && o->get_items_expected_max() <= 1 &&
                o->get_multi_option_policy() == CLI::MultiOptionPolicy::Throw)
                o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
        for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) take_last(*sub);
    }

    // --help without CLI11's notation, llama.cpp's short forms beside the long names.
    void set_formatter(CLI::App& app) const {
        std::vector<std::pair<std::string, std::string>> pairs;
        for (const auto& a : aliases_) pairs.emplace_back(a.short_form, a.long_form);
        auto f = std::make_shared<HelpFormatter>(pairs);
        f->column_width(app.get_formatter()->get_column_width());
        app.formatter(f);
        for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
            auto fs = std::make_shared<HelpFormatter>(pairs);
            fs->column_width(sub->get_formatter()->get_column_width());
            sub->formatter(fs);
        }
    }

    // The option of this name in the app or any subcommand.
    static const CLI::Option* find(const CLI::App& app, const std::string& name) {
        if (const CLI::Option* o = app.get_option_no_throw(name)) return o;
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
            if (const CLI::Option* o = find(*sub, name)) return o;
        return nullptr;
    }

    static void names(const CLI::App& app, std::vector<std::string>& out) {
        for (const CLI::Option* o : app.get_options()) {
            for (const auto& l : o->get_lnames()) out.push_back("--" + l);
            for (const auto& s : o->get_snames()) out.push_back("-" + s);
        }
        for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names(*sub, out);
    }

    static size_t distance(std::string_view a, std::string_view b) {
        std::vector<size_t> row(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (size_t i = 1; i <= a.size(); ++i) {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= b.size(); ++j) {
                const size_t up = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
                diag = up;
            }
        }
        return row[b.size()];
    }

    std::string suggestion(const CLI::App& app, const std::string& flag) const {
        std::vector<std::string> all;
        names(app, all);
        for (const auto& a : aliases_) all.emplace_back(a.short_form);
        std::string best;
        size_t best_d = SIZE_MAX;
        for (const auto& n : all)
            if (const size_t d = distance(flag, n); d < best_d) best_d = d, best = n;
        return best_d <= std::max<size_t>(2, flag.size() / 3) ? " (did you mean " + best + "?)" : "";
    }

    static bool looks_like_flag(const std::string& a) {
        return a.size() >= 2 && a[0] == '-' && (std::isalpha(static_cast<unsigned char>(a[1])) || (a[1] == '-' && a.size() > 2));
    }

    // Aliases to long forms; an unknown flag is reported here, before CLI11 splits it.
    void rewrite(const CLI::App& app) {
        bool value_next = false;  // this argument is the value of the flag before it ("-n -1")
        for (size_t i = 1; i < args_.size(); ++i) {
            std::string& a = args_[i];
            if (a == "--") break;
            if (value_next || !looks_like_flag(a)) {
                value_next = false;
                continue;
            }
            const size_t eq = a.find('=');
            std::string name = a.substr(0, eq);
            for (const auto& al : aliases_)
                if (name == al.short_form) {
                    name = al.long_form;
                    a = name + (eq == std::string::npos ? "" : a.substr(eq));
                }
            const CLI::Option* o = find(app, name);
            if (!o && name[1] != '-' && name.size() > 2) {
                // "-n5": a one-letter flag with its number attached, as CLI11 reads it.
                const CLI::Option* head = find(app, name.substr(0, 2));
                const bool number = name.find_first_not_of("0123456789.-", 2) == std::string::npos;
                if (head && head->get_type_size_max() > 0 && number) continue;
            }
            if (!o) {
                const bool llama = std::find(std::begin(kLlamaCppFlags), std::end(kLlamaCppFlags), name) != std::end(kLlamaCppFlags);
                if (llama) throw FlagError(name + ": a llama.cpp flag not supported by pocket's " + tool_);
                throw FlagError("unknown flag " + name + suggestion(app, name) + " (see --help)");
            }
            value_next = eq == std::string::npos && o->get_type_size_max() > 0 && o->get_expected_min() > 0;
        }
    }

    std::string tool_;
    std::vector<FlagAlias> aliases_;
    std::vector<std::string_view> accepted_;
    std::vector<std::string> args_;
};

}  // namespace pocket::tools
