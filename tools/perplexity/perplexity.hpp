#pragma once
// Perplexity by llama-perplexity's method, and KL divergence against a saved base model.
//
// The text is tokenized whole (BOS first when the model adds one) and cut into chunks of
// n_ctx tokens; the first token of each chunk is replaced by BOS; each chunk is evaluated
// from an empty cache, and only its second half is scored: positions n_ctx/2 .. n_ctx-2
// predict the next token (n_ctx/2 - 1 predictions per chunk). The printed [k] values are the
// running perplexity over chunks 1..k. With n_seq > 1, that many chunks share one batch
// (llama-perplexity does the same when -b > -c); the figures are bitwise the same.
#include "kl_divergence.hpp"
#include "pocket/context.hpp"
#include "pocket/model.hpp"

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace pocket::tools {

struct KlStats {
    size_t n = 0;
    double kld_mean = 0, kld_stderr = 0, kld_max = 0;
    double dp_mean = 0, dp_stderr = 0, dp_rms = 0;  // Δp of the correct token, current - base
    double same_top = 0;                            // fraction of positions with the same argmax
    double base_ppl = 0;
    std::vector<float> kld_values, dp_values;       // per scored position, for the percentiles
    // llama-perplexity's table: the running figures after each chunk.
    struct Chunk {
        double ppl, ln_ratio, kld_mean, dp_rms, same_top;  // ln_ratio: ln(PPL / base PPL)
    };
    std::vector<Chunk> chunks;
};

struct PerplexityResult {
    size_t n_tokens = 0, n_chunks = 0, n_scored = 0;
    std::vector<double> running_ppl;  // after each chunk
    double ppl = 0, ppl_stderr = 0;
    double seconds = 0;
    std::optional<KlStats> kl;
};

struct PerplexityOptions {
    uint32_t n_ctx = 512;
    int n_chunks = -1;               // --chunks: at most this many (-1: all)
    uint32_t n_seq = 1;              // chunks evaluated side by side in one batch (-b / -c);
                                     // the context must hold n_seq * n_ctx tokens
    std::string kl_base_out;         // --kl-divergence-base FILE (without --kl-divergence: write it)
    std::string kl_base_in;          // --kl-divergence-base FILE with --kl-divergence: compare with it
    KlBaseWriter* kl_writer = nullptr;  // opened by the caller before any work; wins over kl_base_out
};

// As llama-perplexity and llama-imatrix: a logical batch (c.n_batch, -b) larger than a chunk
// holds several chunks side by side, each in its own part of the cache. Sets o.n_seq (at most
// o.n_chunks when that is set), c.n_ctx to n_seq chunks and c.n_batch to at least one chunk.
void fit_chunks_to_batch(PerplexityOptions& o, ContextOptions& c);

// Tokenizes as llama-perplexity does: one trailing newline dropped, BOS added when the
// model adds one.
std::vector<TokenId> perplexity_tokens(const Model& model, std::string text);

// Runs the evaluation. `progress(chunk, n_chunks, running_ppl, kl_row)` is called after every
// chunk; kl_row is that chunk's row of the KL table when comparing with a base, else null.
using PerplexityProgress = std::function<void(size_t, size_t, double, const KlStats::Chunk*)>;
PerplexityResult compute_perplexity(Context& ctx, const std::vector<TokenId>& tokens, const PerplexityOptions& options,
                                    const PerplexityProgress& progress = {});

}  // namespace pocket::tools
