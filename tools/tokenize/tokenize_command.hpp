#pragma once
// `tokenize`: llama-tokenize's behaviour, flag for flag, on pocket's tokenizer.
#include <iosfwd>
#include <optional>
#include <string>

namespace pocket::tools {

struct TokenizeOptions {
    std::string model;                  // -m
    std::optional<std::string> prompt;  // -p
    std::optional<std::string> file;    // -f, read whole (escapes as for -p)
    bool use_stdin = false;             // --stdin (wins over -f and -p)
    bool ids = false;                   // --ids: print [1, 2, 3]
    bool no_bos = false;                // --no-bos
    bool parse_special = true;          // --no-parse-special turns it off
    bool escape = true;                 // --no-escape turns it off
    bool show_count = false;            // --show-count
};

// llama.cpp's string_process_escapes: \n \r \t \' \" \\ and \xHH; other backslashes stay.
std::string process_escapes(const std::string& text);

// Runs the command; throws pocket::Error on a problem (unreadable file, bad model, ...).
void run_tokenize(const TokenizeOptions& options, std::istream& in, std::ostream& out);

}  // namespace pocket::tools
