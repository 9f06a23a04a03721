// `tokenize`: llama-tokenize's flags. Argument parsing only; the command is tokenize_command.cpp.
#include "../common/command_line.hpp"
#include "pocket/error.hpp"
#include "tokenize_command.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"tokenize: print the tokens of a text for a model's vocabulary (a vocab-only GGUF is enough)"};
    pocket::tools::TokenizeOptions o;
    std::string prompt, file;
    bool no_parse_special = false, no_escape = false, escape = false, log_disable = false, verbose = false;

    app.add_option("-m,--model", o.model, "GGUF file")->required();
    auto* p = app.add_option("-p,--prompt", prompt, "text to tokenize (escapes such as \\n processed unless --no-escape)");
    auto* f = app.add_option("-f,--file", file, "read the text from a file (all of it; escapes processed as for -p)");
    app.add_flag("--stdin", o.use_stdin, "read the text from standard input (wins over -f and -p)");
    app.add_flag("--ids", o.ids, "print only the ids, as [1, 2, 3]");
    app.add_flag("--no-bos", o.no_bos, "do not add BOS even if the vocabulary asks for it");
    app.add_flag("--no-parse-special", no_parse_special, "tokenize special-token text as plain text");
    app.add_flag("-e,--escape", escape, "process escapes (\\n, \\r, \\t, \\', \\\", \\\\, \\xHH) (default)");
    app.add_flag("--no-escape", no_escape, "do not process escapes");
    app.add_flag("--show-count", o.show_count, "print the number of tokens");
    app.add_flag("--log-disable", log_disable, "no log output (the default; for llama-tokenize compatibility)");
    app.add_flag("-v,--verbose", verbose, "log to stderr");
    pocket::tools::CommandLine cl("tokenize", argc, argv);
    if (auto rc = cl.parse(app)) return *rc;

    if (*p) o.prompt = prompt;
    if (*f) o.file = file;
    o.parse_special = !no_parse_special;
    o.escape = !no_escape;
    spdlog::set_level(verbose && !log_disable ? spdlog::level::debug : spdlog::level::off);

    try {
        pocket::tools::run_tokenize(o, std::cin, std::cout);
    } catch (const pocket::Error& e) {
        std::cerr << "tokenize: " << e.what() << "\n";
        return 1;
    } catch (const std::exception& e) {
        std::cerr << "tokenize: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
