#include "pocket/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace pocket {

Candidates Candidates::from_logits(std::span<const float> logits) {
    Candidates c;
    c.items.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) c.items[i] = {static_cast<TokenId>(i), logits[i], 0.0f};
    return c;
}

double SamplerRng::uniform() {
    // 27 + 26 bits make a 53-bit integer: every double the result can take is exact.
    const uint64_t hi = engine_() >> 5;
    const uint64_t lo = engine_() >> 6;
    return static_cast<double>((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

namespace {

// Highest logit first; equal logits by id, so that the order is the same on every platform.
bool ranks_before(const TokenCandidate& a, const TokenCandidate& b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

void sort_candidates(Candidates& c) {
    if (c.sorted) return;
    std::sort(c.items.begin(), c.items.end(), ranks_before);
    c.sorted = true;
}

void softmax(Candidates& c) {
    if (c.items.empty()) return;
    float max_logit = -std::numeric_limits<float>::infinity();
    for (const auto& t : c.items) max_logit = std::max(max_logit, t.logit);
    double sum = 0.0;
    for (auto& t : c.items) {
        t.p = std::exp(t.logit - max_logit);
        sum += t.p;
    }
    for (auto& t : c.items) t.p = static_cast<float>(t.p / sum);
}

void apply_penalties(Candidates& c, const std::unordered_map<TokenId, int>& counts, float repeat, float frequency,
                     float presence) {
    if (counts.empty()) return;
    for (auto& t : c.items) {
        const auto it = counts.find(t.id);
        if (it == counts.end()) continue;
        // Dividing a negative logit would raise it: multiply those instead (as llama.cpp does).
        t.logit = t.logit <= 0 ? t.logit * repeat : t.logit / repeat;
        t.logit -= static_cast<float>(it->second) * frequency + (it->second > 0 ? presence : 0.0f);
    }
    c.sorted = false;
}

void apply_top_k(Candidates& c, int32_t k) {
    if (k <= 0 || c.items.empty()) return;
    const size_t keep = std::min(static_cast<size_t>(k), c.items.size());
    if (!c.sorted) {
        // Only the first k need ordering: this runs on the whole vocabulary every token.
        std::partial_sort(c.items.begin(), c.items.begin() + static_cast<std::ptrdiff_t>(keep), c.items.end(), ranks_before);
        c.sorted = true;
    }
    c.items.resize(keep);
}

void apply_typical(Candidates& c, float p, size_t min_keep) {
    if (p >= 1.0f || c.items.empty()) return;
    sort_candidates(c);
    softmax(c);
    float entropy = 0.0f;
    for (const auto& t : c.items) {
        if (t.p > 0) entropy -= t.p * std::log(t.p);
    }
    // Most typical first: -log(p) closest to the entropy.
    std::vector<float> distance(c.items.size());
    for (size_t i = 0; i < c.items.size(); ++i) distance[i] = std::fabs(-std::log(c.items[i].p) - entropy);
    std::vector<size_t> order(c.items.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return distance[a] < distance[b]; });

    float cum = 0.0f;
    size_t keep = order.size();
    for (size_t i = 0; i < order.size(); ++i) {
        cum += c.items[order[i]].p;
        if (cum > p && (min_keep == 0 || i + 1 >= min_keep)) {
            keep = i + 1;
            break;
        }
    }
    std::vector<TokenCandidate> kept;
    kept.reserve(keep);
    for (size_t i = 0; i < keep; ++i) kept.push_back(c.items[order[i]]);
    c.items = std::move(kept);
    c.sorted = false;
}

void apply_top_p(Candidates& c, float p, size_t min_keep) {
    if (p >= 1.0f || c.items.empty()) return;
    sort_candidates(c);
    softmax(c);
    float cum = 0.0f;
    size_t keep = c.items.size();
    for (size_t i = 0; i < c.items.size(); ++i) {
        cum += c.items[i].p;
        if (cum >= p && i + 1 >= min_keep) {
            keep = i + 1;
            break;
        }
    }
    c.items.resize(keep);
}

void apply_min_p(Candidates& c, float p, size_t min_keep) {
    if (p <= 0.0f || c.items.empty()) return;
    sort_candidates(c);
    // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p)
    const float threshold = c.items.front().logit + std::log(p);
    size_t keep = 1;
    while (keep < c.items.size() && (c.items[keep].logit >= threshold || keep < min_keep)) ++keep;
    c.items.resize(keep);
}

void apply_temperature(Candidates& c, float t) {
    if (c.items.empty()) return;
    if (t <= 0.0f) {
        size_t best = 0;
        for (size_t i = 1; i < c.items.size(); ++i) {
            if (c.items[i].logit > c.items[best].logit) best = i;
        }
        for (size_t i = 0; i < c.items.size(); ++i) {
            if (i != best) c.items[i].logit = -std::numeric_limits<float>::infinity();
        }
        return;
    }
    for (auto& item : c.items) item.logit /= t;
}

TokenId pick_greedy(const Candidates& c) {
    if (c.items.empty()) return kNoToken;
    size_t best = 0;
    for (size_t i = 1; i < c.items.size(); ++i) {
        if (c.items[i].logit > c.items[best].logit) best = i;
    }
    return c.items[best].id;
}

TokenId pick_random(Candidates& c, SamplerRng& rng) {
    if (c.items.empty()) return kNoToken;
    softmax(c);
    const double target = rng.uniform();
    double cum = 0.0;
    for (const auto& t : c.items) {
        cum += t.p;
        if (cum > target) return t.id;
    }
    // Rounding left the sum just under the draw: the last candidate with any mass.
    for (auto it = c.items.rbegin(); it != c.items.rend(); ++it) {
        if (it->p > 0) return it->id;
    }
    return c.items.back().id;
}

Sampler::Sampler(const SamplerParams& params) : params_(params), rng_(params.seed) {}

void Sampler::accept(TokenId id) {
    if (params_.penalty_last_n <= 0) return;
    history_.push_back(id);
    ++counts_[id];
    if (history_.size() > static_cast<size_t>(params_.penalty_last_n)) {
        const TokenId old = history_.front();
        history_.pop_front();
        if (--counts_[old] == 0) counts_.erase(old);
    }
}

void Sampler::reset() {
    history_.clear();
    counts_.clear();
    rng_ = SamplerRng(params_.seed);
}

TokenId Sampler::sample(std::span<const float> logits) {
    Candidates c = Candidates::from_logits(logits);
    const SamplerParams& s = params_;
    const bool penalties_on = s.penalty_last_n != 0 &&
                              (s.repeat_penalty != 1.0f || s.frequency_penalty != 0.0f || s.presence_penalty != 0.0f);
    if (penalties_on) apply_penalties(c, counts_, s.repeat_penalty, s.frequency_penalty, s.presence_penalty);
    if (s.temperature <= 0.0f) return pick_greedy(c);
    apply_top_k(c, s.top_k);
    apply_typical(c, s.typical_p, s.min_keep);
    apply_top_p(c, s.top_p, s.min_keep);
    apply_min_p(c, s.min_p, s.min_keep);
    apply_temperature(c, s.temperature);
    return pick_random(c, rng_);
}

}  // namespace pocket
