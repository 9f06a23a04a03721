// The sampler chain (include/pocket/sampler.hpp): each filter seen through what it lets through,
// greedy and penalties, and reproducibility from a seed.
#include "pocket/sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace {

using pocket::TokenId;

// Every filter off: a plain draw at temperature 1.
pocket::SamplerOptions plain(uint64_t seed = 1) {
    pocket::SamplerOptions o;
    o.seed = seed;
    o.temperature = 1.0f;
    o.top_k = 0;
    o.top_p = 1.0f;
    o.min_p = 0.0f;
    o.typical_p = 1.0f;
    return o;
}

std::vector<float> logits_of(const std::vector<float>& probs) {
    std::vector<float> logits;
    for (float p : probs) logits.push_back(std::log(p));
    return logits;
}

std::set<TokenId> drawn(const pocket::SamplerOptions& o, const std::vector<float>& logits, int n = 2000) {
    pocket::Sampler s(o);
    std::set<TokenId> seen;
    for (int i = 0; i < n; ++i) seen.insert(s.sample(logits));
    return seen;
}

TEST(Sampler, ZeroTemperatureIsGreedyWithTiesToTheLowestId) {
    auto o = plain();
    o.temperature = 0.0f;
    pocket::Sampler s(o);
    EXPECT_EQ(s.sample(std::vector<float>{0.0f, 3.0f, 1.0f, 3.0f}), 1);
}

TEST(Sampler, PlainDrawFollowsTheDistribution) {
    const auto logits = logits_of({0.5f, 0.3f, 0.2f});
    pocket::Sampler s(plain(1234));
    int counts[3] = {0, 0, 0};
    const int n = 20000;
    for (int i = 0; i < n; ++i) ++counts[s.sample(logits)];
    EXPECT_NEAR(counts[0] / double(n), 0.5, 0.02);
    EXPECT_NEAR(counts[1] / double(n), 0.3, 0.02);
    EXPECT_NEAR(counts[2] / double(n), 0.2, 0.02);
}

TEST(Sampler, SameSeedSameTokens) {
    const auto logits = logits_of({0.25f, 0.25f, 0.25f, 0.25f});
    pocket::Sampler a(plain(42)), b(plain(42)), c(plain(43));
    int same_as_other_seed = 0;
    for (int i = 0; i < 200; ++i) {
        const TokenId t = a.sample(logits);
        EXPECT_EQ(t, b.sample(logits));
        same_as_other_seed += t == c.sample(logits);
    }
    EXPECT_LT(same_as_other_seed, 150);
}

TEST(Sampler, TopKKeepsTheKHighest) {
    auto o = plain();
    o.top_k = 2;
    EXPECT_EQ(drawn(o, logits_of({0.1f, 0.3f, 0.2f, 0.4f})), (std::set<TokenId>{1, 3}));
    o.top_k = 1;
    EXPECT_EQ(drawn(o, logits_of({0.1f, 0.3f, 0.2f, 0.4f})), (std::set<TokenId>{3}));
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
    auto o = plain();
    o.top_p = 0.65f;  // 0.4 + 0.3 reaches it
    EXPECT_EQ(drawn(o, logits_of({0.1f, 0.4f, 0.2f, 0.3f})), (std::set<TokenId>{1, 3}));
}

TEST(Sampler, MinPKeepsThoseAboveAFractionOfTheBest) {
    auto o = plain();
    o.min_p = 0.45f;  // threshold 0.225
    EXPECT_EQ(drawn(o, logits_of({0.05f, 0.5f, 0.2f, 0.25f})), (std::set<TokenId>{1, 3}));
}

TEST(Sampler, TypicalDropsTheLeastTypical) {
    auto o = plain();
    o.typical_p = 0.85f;  // -log p against the entropy (0.87): 0.7 and 0.2 are the most typical
    EXPECT_EQ(drawn(o, logits_of({0.7f, 0.2f, 0.05f, 0.05f})), (std::set<TokenId>{0, 1}));
}

TEST(Sampler, RepeatPenaltyLooksAtTheLastNTokens) {
    auto o = plain();
    o.temperature = 0.0f;
    o.repeat_penalty = 10.0f;
    o.repeat_last_n = 2;
    pocket::Sampler s(o);
    const std::vector<float> logits = {1.0f, 2.0f, 1.5f};
    EXPECT_EQ(s.sample(logits), 1);
    s.accept(1);
    EXPECT_EQ(s.sample(logits), 2);  // 2.0 / 10 < 1.5
    s.accept(2);
    s.accept(0);  // 1 has left the window
    EXPECT_EQ(s.sample(logits), 1);
}

TEST(Sampler, PresenceAndFrequencyPenaltiesSubtract) {
    auto o = plain();
    o.temperature = 0.0f;
    o.presence_penalty = 0.6f;
    pocket::Sampler s(o);
    const std::vector<float> logits = {1.0f, 1.5f};
    s.accept(1);
    EXPECT_EQ(s.sample(logits), 0);  // 1.5 - 0.6 < 1.0
    auto f = plain();
    f.temperature = 0.0f;
    f.frequency_penalty = 0.2f;
    pocket::Sampler t(f);
    t.accept(1);
    t.accept(1);
    EXPECT_EQ(t.sample(logits), 1);  // 1.5 - 0.4 > 1.0
    t.accept(1);
    EXPECT_EQ(t.sample(logits), 0);  // 1.5 - 0.6 < 1.0
}

TEST(Sampler, DefaultChainKeepsToTheTopTokens) {
    pocket::SamplerOptions o;  // llama.cpp's defaults: top-k 40, top-p 0.95, min-p 0.05, temp 0.8
    std::vector<float> logits(1000, -10.0f);
    logits[10] = 5.0f;
    logits[20] = 4.5f;
    EXPECT_EQ(drawn(o, logits, 300), (std::set<TokenId>{10, 20}));
}

}  // namespace
