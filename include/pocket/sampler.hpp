#pragma once
// Token sampling, as llama.cpp's default chain does it, in its order:
//   penalties (repeat, frequency, presence over the last N tokens) -> top-k -> typical-p
//   -> top-p -> min-p -> temperature -> a draw from the distribution.
// temperature <= 0 means greedy (argmax after penalties; ties go to the lowest id).
// The random source is a seeded mt19937_64 with its own float conversion, so the same seed
// and settings give the same tokens on every platform and with any thread count.
#include "pocket/vocab.hpp"

#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace pocket {

struct SamplerOptions {
    uint64_t seed = 0;
    float temperature = 0.8f;     // --temp
    int32_t top_k = 40;           // --top-k (<= 0: off)
    float top_p = 0.95f;          // --top-p (1: off)
    float min_p = 0.05f;          // --min-p (0: off)
    float typical_p = 1.0f;       // --typical (1: off)
    float repeat_penalty = 1.0f;  // --repeat-penalty (1: off)
    float frequency_penalty = 0.0f;
    float presence_penalty = 0.0f;
    int32_t repeat_last_n = 64;   // --repeat-last-n (0: off, -1: the whole history)
    std::vector<TokenId> banned;  // never sampled (--ignore-eos bans the end-of-generation tokens)
};

class Sampler {
public:
    explicit Sampler(const SamplerOptions& options);

    // Picks the next token from a row of logits (n_vocab floats). Does not accept it.
    TokenId sample(std::span<const float> logits);
    // Records a token (prompt or generated) for the penalties.
    void accept(TokenId token);
    void reset();  // forgets the history (the random stream goes on)

    const SamplerOptions& options() const { return options_; }

private:
    struct Candidate {
        TokenId id;
        float logit;
        float p;
    };
    void apply_penalties();
    void sort_by_logit();
    void softmax();

    SamplerOptions options_;
    std::mt19937_64 rng_;
    std::vector<TokenId> history_;
    std::vector<Candidate> cand_;
    bool sorted_ = false;
};

}  // namespace pocket
