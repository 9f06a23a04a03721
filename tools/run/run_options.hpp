#pragma once
// Everything `run` can be told, with llama.cpp's defaults. Filled by cli.cpp.
#include "pocket/context.hpp"
#include "pocket/model.hpp"
#include "pocket/sampler.hpp"

#include <cstdio>
#include <optional>
#include <string>

namespace pocket::tools {

struct RunOptions {
    std::string model;              // -m; empty: the bundled model
    std::string prompt;             // -p
    std::string prompt_file;        // -f
    int32_t n_predict = -1;         // -n; -1: until EOS or the end of the context
    bool escape = false;            // -e: process \n, \t, ... in the prompt
    bool color = false;             // --color
    bool verbose = false;           // -v
    bool display_prompt = true;     // --no-display-prompt turns it off
    bool seed_given = false;
    int n_gpu_layers = 0;           // -ngl (no GPU backend yet: accepted, must be 0 to matter)
    ModelLoadOptions load;          // --no-mmap, --mlock
    ContextOptions context;         // -c -b -ub -t -ctk -ctv
    SamplerOptions sampling;        // -s --temp --top-k ...
};

// The default prompt when neither -p nor -f is given.
inline constexpr const char* kDefaultPrompt = "Once upon a time";

// Loads the model, evaluates the prompt, streams the text to `out` and a timing summary to
// `log`. Returns the process exit code. Throws pocket::Error on bad input.
int run_generation(const RunOptions& options, std::FILE* out, std::FILE* log);

// \n \t \\ \" \' \r \0 and \xHH, as llama.cpp's -e does.
std::string process_escapes(const std::string& s);

std::string bundled_model_path();

}  // namespace pocket::tools
