#pragma once
// `quantize`: what the flags ask for, done and reported (the flags themselves are in cli.cpp).
#include "pocket/quantize.hpp"

#include <cstdio>
#include <optional>
#include <string>

namespace pocket::tools {

struct QuantizeCommand {
    std::string input, output;
    const QuantFileType* type = nullptr;
    QuantizeOptions options;
    std::string imatrix_path;
    bool verbose = false;   // -v: one line per tensor with its chosen type
    bool dry_run = false;   // --dry-run: print each tensor's type and size, write nothing
};

// Where `quantize IN TYPE` (no output named) writes, as llama-quantize: ggml-model-TYPE.gguf
// beside the input.
std::string default_output_path(const std::string& input, const QuantFileType& type);

// Quantizes and prints the summary to `out`; progress (a bar when `err` is a terminal) and
// the -v lines go to `err`. Throws pocket::Error.
void run_quantize(QuantizeCommand& c, std::FILE* out, std::FILE* err);

}  // namespace pocket::tools
