// Samplers: each step on small hand-checked distributions, the chain, and the RNG's
// platform independence.
#include "pocket/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace {

using pocket::Candidates;
using pocket::TokenId;

std::vector<TokenId> ids_of(const Candidates& c) {
    std::vector<TokenId> ids;
    for (const auto& t : c.items) ids.push_back(t.id);
    return ids;
}

// Logits whose softmax is exactly `probs` (up to rounding).
Candidates from_probs(const std::vector<float>& probs) {
    std::vector<float> logits;
    for (float p : probs) logits.push_back(std::log(p));
    return Candidates::from_logits(logits);
}

TEST(SamplerRng, IsMt19937WithAFixedConversion) {
    // The C++ standard fixes mt19937's output: default seed 5489 gives 3499211612, 581869302.
    pocket::SamplerRng rng(5489);
    const double expected = static_cast<double>((uint64_t{3499211612u >> 5} << 26) | (581869302u >> 6)) / 9007199254740992.0;
    EXPECT_EQ(rng.uniform(), expected);
    pocket::SamplerRng a(42), b(42), c(43);
    for (int i = 0; i < 100; ++i) {
        const double x = a.uniform();
        EXPECT_EQ(x, b.uniform());
        EXPECT_GE(x, 0.0);
        EXPECT_LT(x, 1.0);
        (void)c.uniform();
    }
    EXPECT_NE(pocket::SamplerRng(42).uniform(), pocket::SamplerRng(43).uniform());
}

TEST(Samplers, GreedyTakesTheFirstHighest) {
    EXPECT_EQ(pocket::pick_greedy(Candidates::from_logits(std::vector<float>{0.1f, 2.0f, -1.0f, 2.0f})), 1);
}

TEST(Samplers, TopKKeepsTheKHighest) {
    auto c = Candidates::from_logits(std::vector<float>{0.1f, 3.0f, -1.0f, 2.0f, 2.5f});
    pocket::apply_top_k(c, 3);
    EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 4, 3}));
    pocket::apply_top_k(c, 0);  // off
    EXPECT_EQ(c.items.size(), 3u);
}

TEST(Samplers, TopPKeepsTheSmallestSetReachingP) {
    auto c = from_probs({0.1f, 0.4f, 0.2f, 0.3f});
    pocket::apply_top_p(c, 0.7f);  // 0.4 + 0.3 = 0.7 reaches it
    EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 3}));
    auto d = from_probs({0.1f, 0.4f, 0.2f, 0.3f});
    pocket::apply_top_p(d, 0.71f);
    EXPECT_EQ(ids_of(d), (std::vector<TokenId>{1, 3, 2}));
    auto e = from_probs({0.1f, 0.4f, 0.2f, 0.3f});
    pocket::apply_top_p(e, 0.1f, /*min_keep=*/2);
    EXPECT_EQ(e.items.size(), 2u);
}

TEST(Samplers, MinPKeepsThoseAboveAFractionOfTheBest) {
    auto c = from_probs({0.05f, 0.5f, 0.2f, 0.25f});
    pocket::apply_min_p(c, 0.45f);  // threshold 0.225
    EXPECT_EQ(ids_of(c), (std::vector<TokenId>{1, 3}));
}

TEST(Samplers, TypicalKeepsTokensNearTheEntropy) {
    // Uniform over four: every token is equally typical; p = 0.5 keeps two (cum 0.5 is not > 0.5).
    auto c = from_probs({0.25f, 0.25f, 0.25f, 0.25f});
    pocket::apply_typical(c, 0.5f);
    EXPECT_EQ(c.items.size(), 3u);
    // A peaked distribution: the rare tail is the least typical and goes first.
    auto d = from_probs({0.7f, 0.2f, 0.05f, 0.05f});
    pocket::apply_typical(d, 0.85f);  // -log p vs entropy 0.87: 0.7 then 0.2 (cum 0.9 > 0.85)
    EXPECT_EQ(ids_of(d), (std::vector<TokenId>{0, 1}));
}

TEST(Samplers, TemperatureScalesOrKeepsOnlyTheBest) {
    auto c = Candidates::from_logits(std::vector<float>{1.0f, 2.0f, 4.0f});
    pocket::apply_temperature(c, 2.0f);
    EXPECT_FLOAT_EQ(c.items[2].logit, 2.0f);
    auto d = Candidates::from_logits(std::vector<float>{1.0f, 4.0f, 2.0f});
    pocket::apply_temperature(d, 0.0f);
    EXPECT_TRUE(std::isinf(d.items[0].logit));
    EXPECT_FLOAT_EQ(d.items[1].logit, 4.0f);
    EXPECT_TRUE(std::isinf(d.items[2].logit));
}

TEST(Samplers, PenaltiesFollowLlamaCpp) {
    auto c = Candidates::from_logits(std::vector<float>{2.0f, -2.0f, 1.0f});
    pocket::apply_penalties(c, {{0, 2}, {1, 1}}, /*repeat=*/2.0f, /*frequency=*/0.5f, /*presence=*/0.25f);
    EXPECT_FLOAT_EQ(c.items[0].logit, 2.0f / 2 - 2 * 0.5f - 0.25f);
    EXPECT_FLOAT_EQ(c.items[1].logit, -2.0f * 2 - 1 * 0.5f - 0.25f);
    EXPECT_FLOAT_EQ(c.items[2].logit, 1.0f);
}

TEST(Sampler, ZeroTemperatureIsGreedy) {
    pocket::SamplerParams p;
    p.temperature = 0.0f;
    pocket::Sampler s(p);
    EXPECT_EQ(s.sample(std::vector<float>{0.0f, 1.0f, 3.0f, 2.0f}), 2);
}

TEST(Sampler, SameSeedSameTokensAndFrequenciesFollowTheDistribution) {
    pocket::SamplerParams p;
    p.seed = 1234;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
    pocket::Sampler a(p), b(p);
    std::map<TokenId, int> counts;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
        const TokenId t = a.sample(logits);
        EXPECT_EQ(t, b.sample(logits));
        ++counts[t];
    }
    EXPECT_NEAR(counts[0] / double(n), 0.5, 0.02);
    EXPECT_NEAR(counts[1] / double(n), 0.3, 0.02);
    EXPECT_NEAR(counts[2] / double(n), 0.2, 0.02);
    a.reset();
    pocket::Sampler fresh(p);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(a.sample(logits), fresh.sample(logits));
}

TEST(Sampler, RepeatPenaltyLooksAtTheLastNTokens) {
    pocket::SamplerParams p;
    p.temperature = 0.0f;
    p.repeat_penalty = 10.0f;
    p.penalty_last_n = 2;
    pocket::Sampler s(p);
    const std::vector<float> logits = {1.0f, 2.0f, 1.5f};
    EXPECT_EQ(s.sample(logits), 1);
    s.accept(1);
    EXPECT_EQ(s.sample(logits), 2);  // 1 is penalised to 0.2
    s.accept(2);
    s.accept(0);                      // 1 falls out of the window
    EXPECT_EQ(s.sample(logits), 1);
}

TEST(Sampler, DefaultChainKeepsToTheTopTokens) {
    pocket::SamplerParams p;  // llama.cpp's defaults: top-k 40, top-p 0.95, min-p 0.05, temp 0.8
    p.seed = 7;
    pocket::Sampler s(p);
    std::vector<float> logits(1000, -10.0f);
    logits[10] = 5.0f;
    logits[20] = 4.5f;
    for (int i = 0; i < 200; ++i) {
        const TokenId t = s.sample(logits);
        EXPECT_TRUE(t == 10 || t == 20) << t;
    }
}

}  // namespace
