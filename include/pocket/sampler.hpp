#pragma once
// Token samplers in llama.cpp's manner: each step filters or reshapes a list of candidates
// (id, logit, probability), and a chain runs them in llama.cpp's default order
// penalties -> top-k -> typical -> top-p -> min-p -> temperature -> random draw.
// The random draw is reproducible across platforms: std::mt19937 (whose output the C++
// standard fixes) turned into a double by the code here, not by std::uniform_real_distribution.
#include "pocket/vocab.hpp"

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

namespace pocket {

struct TokenCandidate {
    TokenId id = 0;
    float logit = 0.0f;
    float p = 0.0f;
};

struct Candidates {
    std::vector<TokenCandidate> items;
    bool sorted = false;  // by logit, highest first

    static Candidates from_logits(std::span<const float> logits);
};

// A seeded source of uniform doubles in [0, 1), identical on every platform.
class SamplerRng {
public:
    explicit SamplerRng(uint32_t seed) : engine_(seed) {}
    double uniform();  // 53 random bits from two 32-bit draws

private:
    std::mt19937 engine_;
};

// The steps, usable alone. min_keep: never keep fewer candidates than this.
void sort_candidates(Candidates& c);
void softmax(Candidates& c);  // fills p from the logits
void apply_penalties(Candidates& c, const std::unordered_map<TokenId, int>& counts, float repeat, float frequency,
                     float presence);
void apply_top_k(Candidates& c, int32_t k);  // k <= 0: no-op
void apply_typical(Candidates& c, float p, size_t min_keep = 0);
void apply_top_p(Candidates& c, float p, size_t min_keep = 0);
void apply_min_p(Candidates& c, float p, size_t min_keep = 0);
void apply_temperature(Candidates& c, float t);  // t <= 0 keeps only the highest logit
TokenId pick_greedy(const Candidates& c);         // highest logit; the lowest index among equals
TokenId pick_random(Candidates& c, SamplerRng& rng);

struct SamplerParams {
    uint32_t seed = 0;
    float temperature = 0.8f;       // <= 0: greedy
    int32_t top_k = 40;             // <= 0: off
    float top_p = 0.95f;            // >= 1: off
    float min_p = 0.05f;            // <= 0: off
    float typical_p = 1.0f;         // >= 1: off
    int32_t penalty_last_n = 64;    // 0: off
    float repeat_penalty = 1.0f;    // 1: off
    float frequency_penalty = 0.0f;
    float presence_penalty = 0.0f;
    size_t min_keep = 0;
};

class Sampler {
public:
    explicit Sampler(const SamplerParams& params);

    // Picks the next token from a row of logits (one per vocabulary entry).
    TokenId sample(std::span<const float> logits);
    // Records a token of the context (prompt or generated) for the penalties.
    void accept(TokenId id);
    void reset();  // forgets the history and reseeds

    const SamplerParams& params() const { return params_; }

private:
    SamplerParams params_;
    SamplerRng rng_;
    std::deque<TokenId> history_;
    std::unordered_map<TokenId, int> counts_;
};

}  // namespace pocket
