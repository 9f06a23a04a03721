// `run -i`: a chat in the terminal (readline: line editing and history) or, when stdin is
// not a terminal, one message per line so that chats can be scripted.
#include "chat_session.hpp"
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"
#include "../common/devices.hpp"
#include "run_options.hpp"

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <readline/history.h>
#include <readline/readline.h>
#include <unistd.h>

namespace pocket::tools {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_generating{false};

// Ctrl-C: while an answer streams, stop it and return to the prompt; at the prompt, leave.
extern "C" void on_sigint(int) {
    if (g_generating.load()) {
        g_stop.store(true);
        return;
    }
    const char nl = '\n';
    (void)!::write(STDOUT_FILENO, &nl, 1);
    std::_Exit(0);
}

const char* kHelp =
    "commands:\n"
    "  /clear   forget the conversation (the system prompt stays)\n"
    "  /help    this list\n"
    "  /quit    leave (Ctrl-D does too)\n"
    "a line ending in \\ continues on the next line; Ctrl-C stops an answer, and leaves at an empty prompt\n";

// One message from the terminal (readline) or from a pipe; nullopt at EOF.
std::optional<std::string> read_message(bool tty) {
    std::string message;
    const char* prompt = "> ";
    while (true) {
        std::string line;
        if (tty) {
            char* raw = ::readline(prompt);
            if (!raw) return message.empty() ? std::nullopt : std::optional<std::string>(message);
            line = raw;
            std::free(raw);
        } else if (!std::getline(std::cin, line)) {
            return message.empty() ? std::nullopt : std::optional<std::string>(message);
        }
        if (!line.empty() && line.back() == '\\') {
            message += line.substr(0, line.size() - 1) + "\n";
            prompt = "... ";
            continue;
        }
        message += line;
        if (tty && !message.empty()) ::add_history(message.c_str());
        return message;
    }
}

}  // namespace

int run_interactive(const RunOptions& o, std::FILE* out, std::FILE* log) {
    const std::string path = o.model.empty() ? bundled_model_path() : o.model;
    ModelLoadOptions load = o.load;
    load.progress = load_progress(log);
    auto model = Model::load(path, load);
    warn_context_size(*model, o.context.n_ctx, log);
    Context ctx(*model, o.context);
    report_placement(*model, ctx, log);
    ChatTemplate tmpl = chat_template_for(model->file(), model->tokenizer().vocab(), o.chat_template);
    ChatSession session(ctx, std::move(tmpl), sampler_options(o, *model), o.chat);

    const bool tty = ::isatty(STDIN_FILENO);
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    if (tty) fmt::print(log, "pocket chat: {} — /help for commands, Ctrl-D to leave\n", path);

    // One user turn: the answer streamed to `out`, what stopped it said on `log`.
    auto turn = [&](const std::string& message) {
        g_stop.store(false);
        g_generating.store(true);
        ChatSession::Reply reply;
        try {
            // --in-prefix / --in-suffix wrap what the user typed, as llama.cpp's interactive mode does.
            reply = session.respond(o.in_prefix + message + o.in_suffix, [&](std::string_view piece) {
                fmt::print(out, "{}", piece);
                std::fflush(out);
            }, g_stop);
        } catch (...) {
            g_generating.store(false);
            throw;
        }
        g_generating.store(false);
        fmt::print(out, "\n");
        if (reply.stop == ChatSession::Stop::interrupted) fmt::print(out, "(stopped)\n");
        if (reply.stop == ChatSession::Stop::context_full) {
            // With shifting on, only a message too long for the context itself ends here.
            if (o.chat.context_shift)
                fmt::print(log, "the message does not fit in the context ({} tokens) beside the system prompt and --keep: "
                                "raise -c, or /clear\n", ctx.n_ctx());
            else
                fmt::print(log, "the context is full ({} tokens) and --no-context-shift is set: /clear to go on\n", ctx.n_ctx());
        }
        std::fflush(out);
    };

    // -p with -cnv is the first message (llama.cpp); -st then leaves after its answer.
    if (o.prompt_given && !o.prompt.empty()) {
        const std::string first = o.escape ? process_escapes(o.prompt) : o.prompt;
        if (tty) fmt::print(out, "> {}\n", first);
        turn(first);
        if (o.single_turn) return 0;
    }
    while (auto message = read_message(tty)) {
        if (*message == "/quit" || *message == "/exit") break;
        if (*message == "/help") {
            fmt::print(out, "{}", kHelp);
            continue;
        }
        if (*message == "/clear") {
            session.clear();
            fmt::print(out, "(conversation cleared)\n");
            continue;
        }
        if (message->empty()) continue;
        turn(*message);
        if (o.single_turn) break;
    }
    return 0;
}

}  // namespace pocket::tools
