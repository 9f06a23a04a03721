#pragma once
// Everything `run` can be told, with llama.cpp's defaults. Filled by cli.cpp.
#include "chat_session.hpp"
#include "pocket/context.hpp"
#include "pocket/model.hpp"
#include "pocket/sampler.hpp"

#include <cstdio>
#include <optional>
#include <string>

namespace pocket::tools {

struct RunOptions {
    std::string model;              // -m; empty: the bundled model
    std::string prompt = "Once upon a time";  // -p; "" given: BOS only, as llama.cpp
    bool prompt_given = false;      // -p was on the command line (with -cnv: the first message)
    std::string prompt_file;        // -f
    int32_t n_predict = -1;         // -n; -1: until EOS or the end of the context
    bool escape = true;             // process \n, \t, ... in the prompt (llama.cpp; --no-escape: not)
    bool color = false;             // --color
    bool verbose = false;           // -v
    bool display_prompt = true;     // --no-display-prompt turns it off
    bool seed_given = false;        // -s N; otherwise the summary prints the random seed
    std::string n_gpu_layers = "auto";  // -ngl: N, all or auto
    ModelLoadOptions load;          // --no-mmap, --mlock, -ngl, -dev, --no-repack
    ContextOptions context;         // -c -b -ub -t -ctk -ctv
    SamplerOptions sampling;        // -s --temp --top-k ...
    bool ignore_eos = false;        // --ignore-eos: never sample an end-of-generation token

    bool interactive = false;       // -i, -cnv: chat
    bool single_turn = false;       // -st: chat for one message and its answer, then leave
    std::string chat_template;      // --chat-template NAME|FILE
    std::string render_chat;        // --render-chat MESSAGES.json: print the rendered prompt and exit
    ChatOptions chat;               // -sys -r --keep --no-context-shift
    std::string in_prefix, in_suffix;  // --in-prefix / --in-suffix: around each chat message
};

// `run -i`: the chat loop. Returns the exit code.
int run_interactive(const RunOptions& options, std::FILE* out, std::FILE* log);

// `run --render-chat`: prints the template's rendering of the JSON file.
int run_render_chat(const RunOptions& options, std::FILE* out);

// Loads the model, evaluates the prompt, streams the text to `out` and a timing summary to
// `log`. Returns the process exit code. Throws pocket::Error on bad input.
int run_generation(const RunOptions& options, std::FILE* out, std::FILE* log);

// \n \t \\ \" \' \r \0 and \xHH, as llama.cpp's -e does.
std::string process_escapes(const std::string& s);

std::string bundled_model_path();

// The sampler settings for this model: --ignore-eos bans its end-of-generation tokens.
SamplerOptions sampler_options(const RunOptions& options, const Model& model);

}  // namespace pocket::tools
