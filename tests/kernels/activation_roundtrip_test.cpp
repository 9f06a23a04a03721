// The activation types (Q8_0, Q8_1, Q8_K) never appear in files: they are checked by round
// trip, each element within half a quantization step, plus their side fields (Q8_1's s,
// Q8_K's bsums) against the quantized values. Q8_0/Q8_1 quantize with the float scale but
// store it as fp16, so their bound adds 127 * |d - fp16(d)| <= 127 * 2^-11 * d.
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

namespace pocket::kernels {
namespace {

std::vector<float> random_row(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.f, 2.f);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = g(rng);
    for (int64_t i = 0; i < 32 && i < n; ++i) v[static_cast<size_t>(i)] = 0;  // an all-zero first block
    return v;
}

TEST(ActivationRoundTrip, Q8_0WithinHalfStep) {
    const auto x = random_row(1024, 1);
    std::vector<block_q8_0> q(1024 / 32);
    convert_activation_row(GgmlType::Q8_0, x.data(), q.data(), 1024);
    std::vector<float> back(1024);
    dequantize_row(GgmlType::Q8_0, q.data(), back.data(), 1024);
    for (size_t b = 0; b < q.size(); ++b)
        for (int j = 0; j < 32; ++j)
            EXPECT_LE(std::fabs(back[b * 32 + j] - x[b * 32 + j]), (0.5f + 127.f / 2048.f) * fp16_to_f32(q[b].d) * 1.001f);
}

// Every ISA's Q8_0 quantization gives the scalar reference's bytes, ties included: values
// that land exactly on k + 0.5 after scaling round away from zero, as std::round does.
TEST(ActivationRoundTrip, Q8_0BitwiseEqualOnEveryIsa) {
    std::vector<float> x = random_row(2048, 3);
    for (int b = 2; b < 64; ++b) {  // blocks whose scale is 1 (amax 127): x * id is x itself, ties exact
        x[static_cast<size_t>(b * 32)] = (b % 2 ? 127.0f : -127.0f);
        for (int j = 1; j < 32; ++j) x[static_cast<size_t>(b * 32 + j)] = static_cast<float>((b * 7 + j * 13) % 253 - 126) + (j % 3 == 0 ? 0.5f : j % 3 == 1 ? -0.5f : 0.25f);
    }
    test::IsaGuard guard;
    set_active_isa(Isa::scalar);
    std::vector<block_q8_0> want(x.size() / 32);
    convert_activation_row(GgmlType::Q8_0, x.data(), want.data(), static_cast<int64_t>(x.size()));
    for (Isa isa : test::kAllIsas) {
        if (!isa_supported(isa)) continue;
        set_active_isa(isa);
        std::vector<block_q8_0> got(want.size());
        convert_activation_row(GgmlType::Q8_0, x.data(), got.data(), static_cast<int64_t>(x.size()));
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(block_q8_0)), 0) << isa_name(isa);
    }
}

// The same for Q8_K: ties (a block scaled by exactly 1 holds k + 0.5 values, which the
// magic-number rounding sends to even), the sign of the first of two equal magnitudes,
// the largest magnitude last in its block, an all-zero block.
TEST(ActivationRoundTrip, Q8_KBitwiseEqualOnEveryIsa) {
    std::vector<float> x = random_row(256 * 12, 5);
    for (int j = 0; j < 256; ++j) x[static_cast<size_t>(256 + j)] = static_cast<float>((j * 37) % 253 - 126) + (j % 2 ? 0.5f : -0.5f);
    x[256 + 3] = -127.0f;  // iscale = 1
    x[512 + 7] = 9.0f, x[512 + 9] = -9.0f;  // the first one wins: iscale < 0
    x[768 + 9] = 9.0f, x[768 + 7] = -9.0f;  // ... here > 0
    x[1024 + 255] = 50.0f;
    for (int j = 0; j < 256; ++j) x[static_cast<size_t>(1280 + j)] = 0.0f;
    test::IsaGuard guard;
    set_active_isa(Isa::scalar);
    std::vector<block_q8_K> want(x.size() / 256);
    convert_activation_row(GgmlType::Q8_K, x.data(), want.data(), static_cast<int64_t>(x.size()));
    for (Isa isa : test::kAllIsas) {
        if (!isa_supported(isa)) continue;
        set_active_isa(isa);
        std::vector<block_q8_K> got(want.size());
        convert_activation_row(GgmlType::Q8_K, x.data(), got.data(), static_cast<int64_t>(x.size()));
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(block_q8_K)), 0) << isa_name(isa);
    }
}

TEST(ActivationRoundTrip, Q8_1SumMatchesQuants) {
    const auto x = random_row(1024, 2);
    std::vector<block_q8_1> q(1024 / 32);
    convert_activation_row(GgmlType::Q8_1, x.data(), q.data(), 1024);
    for (const auto& b : q) {
        int sum = 0;
        for (int8_t v : b.qs) sum += v;
        // s is rounded from sum * d with the float d; both roundings are below 2^-11 relative
        const double want = static_cast<double>(sum) * fp16_to_f32(b.d);
        EXPECT_NEAR(fp16_to_f32(b.s), want, std::fabs(want) * 2 * (1.0 / 2048) + 1e-6);
    }
}

TEST(ActivationRoundTrip, Q8_KWithinHalfStepAndBsums) {
    const auto x = random_row(1024, 3);
    std::vector<block_q8_K> q(1024 / 256);
    convert_activation_row(GgmlType::Q8_K, x.data(), q.data(), 1024);
    std::vector<float> back(1024);
    dequantize_row(GgmlType::Q8_K, q.data(), back.data(), 1024);
    for (size_t b = 0; b < q.size(); ++b) {
        for (int j = 0; j < 256; ++j) EXPECT_LE(std::fabs(back[b * 256 + j] - x[b * 256 + j]), 0.5f * std::fabs(q[b].d) * 1.01f);
        for (int g = 0; g < 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += q[b].qs[16 * g + j];
            EXPECT_EQ(q[b].bsums[g], sum);
        }
    }
}

}  // namespace
}  // namespace pocket::kernels
