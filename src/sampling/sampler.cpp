#include "pocket/sampler.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <unordered_map>

namespace pocket {

Sampler::Sampler(const SamplerOptions& options) : options_(options), rng_(options.seed) {}

void Sampler::accept(TokenId token) { history_.push_back(token); }

void Sampler::reset() { history_.clear(); }

void Sampler::apply_penalties() {
    const auto& o = options_;
    if (o.repeat_last_n == 0 || (o.repeat_penalty == 1.0f && o.frequency_penalty == 0.0f && o.presence_penalty == 0.0f)) return;
    const size_t n = o.repeat_last_n < 0 ? history_.size() : std::min<size_t>(history_.size(), static_cast<size_t>(o.repeat_last_n));
    std::unordered_map<TokenId, int> count;
    for (size_t i = history_.size() - n; i < history_.size(); ++i) ++count[history_[i]];
    for (auto& c : cand_) {
        auto it = count.find(c.id);
        if (it == count.end()) continue;
        // Dividing a negative logit would raise its probability: multiply it instead.
        c.logit = c.logit > 0 ? c.logit / o.repeat_penalty : c.logit * o.repeat_penalty;
        c.logit -= static_cast<float>(it->second) * o.frequency_penalty + o.presence_penalty;
    }
}

void Sampler::sort_by_logit() {
    if (sorted_) return;
    std::sort(cand_.begin(), cand_.end(), [](const Candidate& a, const Candidate& b) {
        return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
    });
    sorted_ = true;
}

void Sampler::softmax() {
    sort_by_logit();
    const float max = cand_.front().logit;
    double sum = 0.0;
    for (auto& c : cand_) sum += (c.p = std::exp(c.logit - max));
    for (auto& c : cand_) c.p = static_cast<float>(c.p / sum);
}

TokenId Sampler::sample(std::span<const float> logits) {
    const auto& o = options_;
    cand_.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) cand_[i] = {static_cast<TokenId>(i), logits[i], 0.0f};
    for (TokenId id : o.banned)
        if (id >= 0 && static_cast<size_t>(id) < cand_.size()) cand_[static_cast<size_t>(id)].logit = -std::numeric_limits<float>::infinity();
    sorted_ = false;
    apply_penalties();

    if (o.temperature <= 0.0f) {
        const auto best = std::min_element(cand_.begin(), cand_.end(), [](const Candidate& a, const Candidate& b) {
            return a.logit != b.logit ? a.logit > b.logit : a.id < b.id;
        });
        return best->id;
    }
    if (o.top_k > 0 && static_cast<size_t>(o.top_k) < cand_.size()) {
        sort_by_logit();
        cand_.resize(static_cast<size_t>(o.top_k));
    }
    if (o.typical_p < 1.0f && cand_.size() > 1) {
        // Locally typical sampling: keep the tokens whose surprise is closest to the entropy.
        softmax();
        double entropy = 0.0;
        for (const auto& c : cand_) entropy -= c.p > 0 ? c.p * std::log(c.p) : 0.0;
        std::vector<std::pair<double, size_t>> shifted(cand_.size());
        for (size_t i = 0; i < cand_.size(); ++i) shifted[i] = {std::fabs(-std::log(cand_[i].p) - entropy), i};
        std::stable_sort(shifted.begin(), shifted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        double cum = 0.0;
        size_t keep = 0;
        while (keep < shifted.size()) {
            cum += cand_[shifted[keep].second].p;
            ++keep;
            if (cum >= o.typical_p) break;
        }
        std::vector<Candidate> kept;
        for (size_t i = 0; i < keep; ++i) kept.push_back(cand_[shifted[i].second]);
        cand_ = std::move(kept);
        sorted_ = false;
    }
    if (o.top_p < 1.0f && cand_.size() > 1) {
        softmax();
        double cum = 0.0;
        size_t keep = 0;
        while (keep < cand_.size()) {
            cum += cand_[keep].p;
            ++keep;
            if (cum >= o.top_p) break;
        }
        cand_.resize(keep);
    }
    if (o.min_p > 0.0f && cand_.size() > 1) {
        softmax();
        const float threshold = cand_.front().p * o.min_p;
        size_t keep = 1;
        while (keep < cand_.size() && cand_[keep].p >= threshold) ++keep;
        cand_.resize(keep);
    }
    for (auto& c : cand_) c.logit /= o.temperature;
    softmax();
    // A uniform double in [0, 1) from 53 random bits: the same on every platform.
    const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
    double cum = 0.0;
    for (const auto& c : cand_) {
        cum += c.p;
        if (u < cum) return c.id;
    }
    return cand_.back().id;
}

}  // namespace pocket
