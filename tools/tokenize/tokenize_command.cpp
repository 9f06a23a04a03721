#include "tokenize_command.hpp"

#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"

#include <fmt/format.h>

#include <cctype>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace pocket::tools {

std::string process_escapes(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\' || i + 1 >= text.size()) {
            out += text[i];
            continue;
        }
        const char c = text[++i];
        switch (c) {
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case '\'': out += '\''; break;
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case 'x':
                // Two hex digits, and only when a character follows them (as llama.cpp checks).
                if (i + 2 < text.size() && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
                    std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
                    out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
                    i += 2;
                    break;
                }
                [[fallthrough]];
            default:
                out += '\\';
                out += c;
        }
    }
    return out;
}

namespace {

std::string read_all(std::istream& in) {
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

void run_tokenize(const TokenizeOptions& options, std::istream& in, std::ostream& out) {
    if (!options.use_stdin && !options.file && !options.prompt) {
        throw Error("must specify one of: --stdin, --file or --prompt");
    }
    std::string prompt;
    if (options.file && !options.use_stdin) {
        // An ifstream opens a directory and reads nothing from it: say so instead.
        if (std::error_code ec; std::filesystem::is_directory(*options.file, ec))
            throw Error("{}: is a directory, not a text file", *options.file);
        std::ifstream f(*options.file, std::ios::binary);
        if (!f) throw Error("could not open file '{}' for reading", *options.file);
        prompt = read_all(f);
    } else if (options.prompt && !options.use_stdin) {
        prompt = *options.prompt;
    }

    // The model loads before stdin is read, so that a bad model fails fast.
    const Tokenizer tokenizer = Tokenizer::from_file(options.model);
    if (options.use_stdin) {
        prompt = read_all(in);
        if (in.bad()) throw Error("could not read the entire standard input");
    }
    if (options.escape) prompt = process_escapes(prompt);

    const bool add_special = tokenizer.vocab().add_bos() && !options.no_bos;
    const std::vector<TokenId> ids = tokenizer.tokenize(prompt, add_special, options.parse_special);

    std::string text;
    if (options.ids) {
        text += '[';
        for (size_t i = 0; i < ids.size(); ++i) {
            if (i > 0) text += ", ";
            text += std::to_string(ids[i]);
        }
        text += "]\n";
    } else {
        for (TokenId id : ids) {
            // llama-tokenize prints the piece as a C string: it ends at a NUL byte.
            const std::string& piece = tokenizer.token_to_piece(id);
            text += fmt::format("{:6d} -> '{}'\n", id, std::string_view(piece.c_str()));
        }
    }
    if (options.show_count) text += fmt::format("Total number of tokens: {}\n", ids.size());
    out << text;
    out.flush();
}

}  // namespace pocket::tools
