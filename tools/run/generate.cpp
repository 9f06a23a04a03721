#include "pocket/chat_template.hpp"
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"
#include "../common/devices.hpp"
#include "run_options.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace pocket::tools {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

std::string read_text_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("{}: cannot open", path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void print_timing(std::FILE* log, const char* what, double ms, size_t n, const char* unit) {
    if (n == 0) {
        fmt::print(log, "pocket: {:>16} = {:10.2f} ms / {:5} {}\n", what, ms, n, unit);
        return;
    }
    fmt::print(log, "pocket: {:>16} = {:10.2f} ms / {:5} {} ({:8.2f} ms per token, {:8.2f} tokens per second)\n", what, ms, n, unit,
               ms / static_cast<double>(n), 1000.0 * static_cast<double>(n) / ms);
}

}  // namespace

std::string bundled_model_path() {
    // Beside the working directory first (a copied checkout), then the one this was built from.
    if (std::filesystem::exists("models/stories260K.gguf")) return "models/stories260K.gguf";
    return POCKET_BUNDLED_MODEL;
}

SamplerOptions sampler_options(const RunOptions& o, const Model& model) {
    SamplerOptions s = o.sampling;
    if (o.ignore_eos) {
        const auto eog = model.tokenizer().vocab().eog_tokens();
        s.banned.assign(eog.begin(), eog.end());
    }
    return s;
}

std::string process_escapes(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        switch (c) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case '0': out += '\0'; break;
            case '\\': out += '\\'; break;
            case '"': out += '"'; break;
            case '\'': out += '\''; break;
            case 'x':
                if (i + 2 < s.size() + 0 && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
                    std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
                    out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
                    i += 2;
                    break;
                }
                [[fallthrough]];
            default: out += '\\'; out += c;
        }
    }
    return out;
}

int run_render_chat(const RunOptions& o, std::FILE* out) {
    std::string json = read_text_file(o.render_chat);
    // A bare list of messages is the common shape too: the object around it is implied.
    if (const size_t start = json.find_first_not_of(" \t\r\n"); start != std::string::npos && json[start] == '[')
        json = "{\"messages\": " + json + "}";
    std::optional<ChatTemplate> tmpl;
    if (!o.model.empty() || o.chat_template.empty()) {
        // No -m and no --chat-template: the bundled model's template, as run without -m.
        const GgufFile file = GgufFile::open(o.model.empty() ? bundled_model_path() : o.model);
        tmpl = chat_template_for(file, Vocab::from_gguf(file), o.chat_template);
    } else {
        if (auto builtin = builtin_chat_template(o.chat_template)) tmpl = ChatTemplate::parse(*builtin);
        else tmpl = ChatTemplate::parse(read_text_file(o.chat_template));
    }
    fmt::print(out, "{}", render_chat_json(json, *tmpl));
    return 0;
}

int run_generation(const RunOptions& o, std::FILE* out, std::FILE* log) {
    const auto t_start = Clock::now();
    const std::string path = o.model.empty() ? bundled_model_path() : o.model;
    ModelLoadOptions load = o.load;
    load.progress = load_progress(log);
    auto model = Model::load(path, load);
    warn_context_size(*model, o.context.n_ctx, log);
    Context ctx(*model, o.context);
    const Tokenizer& tok = model->tokenizer();
    const double load_ms = ms_since(t_start);

    std::string prompt = !o.prompt_file.empty() ? read_text_file(o.prompt_file) : o.prompt;
    if (o.escape) prompt = process_escapes(prompt);
    bool add_bos = true;
    if (!o.chat.system_prompt.empty() || !o.chat_template.empty()) {
        // -sys or --chat-template without -cnv: the prompt is one user turn of a chat, rendered
        // by the template (llama.cpp), rather than the flags being ignored.
        const auto& sp = tok.vocab().special();
        const std::string bos = sp.bos != kNoToken ? tok.token_to_piece(sp.bos, true) : "";
        const std::string eos = sp.eos != kNoToken ? tok.token_to_piece(sp.eos, true) : "";
        std::vector<ChatMessage> messages;
        if (!o.chat.system_prompt.empty()) messages.push_back({"system", o.chat.system_prompt});
        messages.push_back({"user", prompt});
        prompt = chat_template_for(model->file(), tok.vocab(), o.chat_template).render(messages, true, bos, eos);
        add_bos = !(!bos.empty() && prompt.starts_with(bos));  // the template wrote BOS out as text
    }
    const std::vector<TokenId> tokens = tok.tokenize(prompt, add_bos, /*parse_special=*/true);
    if (tokens.empty()) throw Error("the prompt is empty and the model adds no BOS token");
    if (tokens.size() >= ctx.n_ctx())
        throw Error("the prompt is {} tokens long, but the context holds {} (raise -c, or shorten the prompt)", tokens.size(), ctx.n_ctx());
    report_placement(*model, ctx, log);  // after the input checks: an error stays one line

    const bool tty = ::isatty(::fileno(out));
    const bool color = o.color && tty;
    if (o.display_prompt) {
        if (color) fmt::print(out, "\033[33m");
        fmt::print(out, "{}", prompt);
        if (color) fmt::print(out, "\033[0m");
        std::fflush(out);
    }

    Sampler sampler(sampler_options(o, *model));
    for (TokenId t : tokens) sampler.accept(t);
    const auto t_prompt = Clock::now();
    ctx.decode(tokens);
    const double prompt_ms = ms_since(t_prompt);

    TokenStreamDecoder text(tok);
    const auto t_gen = Clock::now();
    size_t n_gen = 0, n_eval = 0;
    const size_t limit = o.n_predict < 0 ? SIZE_MAX : static_cast<size_t>(o.n_predict);
    while (n_gen < limit) {
        const TokenId next = sampler.sample(ctx.last_logits());
        sampler.accept(next);
        ++n_gen;
        if (tok.vocab().is_eog(next)) break;
        fmt::print(out, "{}", text.push(next));
        std::fflush(out);
        if (n_gen == limit) break;
        if (ctx.n_past() >= ctx.n_ctx()) {
            spdlog::info("the context is full ({} tokens)", ctx.n_ctx());
            break;
        }
        ctx.decode(std::span<const TokenId>(&next, 1));
        ++n_eval;
    }
    fmt::print(out, "{}\n", text.finish());
    std::fflush(out);
    const double gen_ms = ms_since(t_gen);

    fmt::print(log, "\n");
    fmt::print(log, "pocket: {:>16} = {:10.2f} ms\n", "load time", load_ms);
    print_timing(log, "prompt eval time", prompt_ms, tokens.size(), "tokens");
    print_timing(log, "eval time", gen_ms, n_eval, "runs  ");
    fmt::print(log, "pocket: {:>16} = {:10.2f} ms / {:5} tokens\n", "total time", ms_since(t_start), tokens.size() + n_gen);
    // A random seed is worth keeping when the sample was good: -s repeats it.
    if (!o.seed_given && o.sampling.temperature > 0) fmt::print(log, "pocket: {:>16} = {} (chosen at random; -s {} repeats this run)\n", "seed", o.sampling.seed, o.sampling.seed);
    return 0;
}

}  // namespace pocket::tools
