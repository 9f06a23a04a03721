#pragma once
// `imatrix`: runs a model over a text as llama-imatrix does (chunks of -c tokens, BOS first,
// each from an empty cache; perplexity's evaluation, whose running figure it also reports)
// while ImatrixStats collects the inputs of every matrix product; adds any --in-file
// statistics; writes GGUF or the legacy .dat. Only merges when no text is given.
#include "imatrix_stats.hpp"
#include "perplexity.hpp"
#include "pocket/context.hpp"
#include "pocket/model.hpp"

#include <string>
#include <vector>

namespace pocket::tools {

struct ImatrixOptions {
    std::string model, text;               // -m, -f (text may be empty: merge the --in-file ones)
    std::string output = "imatrix.gguf";   // -o
    std::string output_format;             // --output-format gguf|dat; empty: .dat by extension, else gguf
    std::vector<std::string> in_files;     // --in-file, repeatable
    uint32_t n_ctx = 512;                  // -c: tokens per chunk
    int n_chunks = -1;                     // --chunks: at most this many (-1: all)
    bool process_output = false;           // --process-output: output.weight too
    ContextOptions context;                // -b, -ub, -t, -tb (n_ctx is set from -c and -b)
    ModelLoadOptions load;                 // -ngl, -dev, --no-mmap
};

struct ImatrixResult {
    size_t n_entries = 0;
    int32_t chunk_count = 0;
    size_t n_chunks_evaluated = 0;
    double ppl = 0;                        // over the chunks evaluated (0 when none)
    bool dat = false;                      // written in the legacy format
};

// Throws pocket::Error (one line, naming the file or flag) before any work when the output
// would overwrite an input or cannot be written, or a flag is out of range.
ImatrixResult run_imatrix(const ImatrixOptions& options, const PerplexityProgress& progress = {});

}  // namespace pocket::tools
