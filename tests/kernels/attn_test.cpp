// Flash attention's inner steps (AttnKernels). The scalar exp is checked against float64 e^x;
// every ISA this CPU runs must then give the scalar definitions' bits exactly, whatever the
// length, offset or tail, because attention's results must not depend on the ISA's lane count
// or on how a row's cells fall into vectors.
#include "kernel_test_data.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace pocket::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

int64_t ulp_distance(float a, float b) {
    return std::abs(static_cast<int64_t>(std::bit_cast<int32_t>(a)) - std::bit_cast<int32_t>(b));
}

std::vector<float> exp_of(const std::vector<float>& x) {
    std::vector<float> y(x.size(), -1.0f);
    attn_kernels()->exp(x.data(), y.data(), static_cast<int64_t>(x.size()));
    return y;
}

TEST(AttnExp, ScalarWithinTwoUlpOfExp) {
    test::IsaGuard guard;
    set_active_isa(Isa::scalar);
    std::vector<float> x;
    for (float v = -87.3f; v <= 88.0f; v += 0.000731f) x.push_back(v);
    for (float v : {0.0f, -0.0f, 1e-9f, -1e-9f, 0.34657359f, -0.34657359f, 0.6931472f, -0.6931472f, 88.0f, -87.33f})
        x.push_back(v);
    const auto y = exp_of(x);
    int64_t worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const float ref = static_cast<float>(std::exp(static_cast<double>(x[i])));
        worst = std::max(worst, ulp_distance(y[i], ref));
        ASSERT_LE(ulp_distance(y[i], ref), 2) << "exp(" << x[i] << ") = " << y[i] << ", want " << ref;
    }
    std::printf("worst error over %zu arguments: %lld ulp\n", x.size(), static_cast<long long>(worst));
    // What the online softmax relies on: e^0 is exactly 1, masked scores give exactly 0.
    EXPECT_EQ(exp_of({0.0f})[0], 1.0f);
    EXPECT_EQ(exp_of({-kInf})[0], 0.0f);
    EXPECT_EQ(exp_of({-87.34f})[0], 0.0f);
    EXPECT_EQ(exp_of({-1000.0f})[0], 0.0f);
}

TEST(Silu, CloseToFloat64) {
    // x / (1 + e^-x) through pocket's exp: a few ulp from the float64 value where e^-x is a
    // normal float, x itself once e^-x is below the floats, and toward -0 far below zero.
    for (float x = -87.0f; x <= 100.0f; x += 0.0137f) {
        const float ref = static_cast<float>(x / (1.0 + std::exp(-static_cast<double>(x))));
        ASSERT_LE(ulp_distance(silu(x), ref), 4) << "silu(" << x << ") = " << silu(x) << ", want " << ref;
    }
    EXPECT_EQ(silu(0.0f), 0.0f);
    EXPECT_EQ(silu(100.0f), 100.0f);
    EXPECT_LT(std::abs(silu(-100.0f)), 1e-30f);
}

class AttnSteps : public ::testing::TestWithParam<Isa> {};

TEST_P(AttnSteps, BitwiseEqualToScalar) {
    const Isa isa = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    test::IsaGuard guard;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> score(-100.0f, 3.0f), value(-2.0f, 2.0f);

    // exp: every length up to 70 (vector bodies and tails), at an odd offset, with -inf mixed in.
    for (int64_t n = 0; n <= 70; ++n) {
        std::vector<float> x(static_cast<size_t>(n) + 1);
        for (auto& v : x) v = rng() % 9 == 0 ? -kInf : score(rng);
        std::vector<float> want(x.size()), got(x.size());
        set_active_isa(Isa::scalar);
        attn_kernels()->exp(x.data() + 1, want.data() + 1, n);
        set_active_isa(isa);
        attn_kernels()->exp(x.data() + 1, got.data() + 1, n);
        ASSERT_EQ(std::memcmp(want.data() + 1, got.data() + 1, static_cast<size_t>(n) * sizeof(float)), 0) << "n=" << n;
    }

    // swiglu: every length up to 70 at an odd offset, gates across the range where e^-x leaves
    // the floats at either end, signed zeros and infinities mixed in.
    std::uniform_real_distribution<float> gate(-120.0f, 120.0f);
    for (int64_t n = 0; n <= 70; ++n) {
        std::vector<float> g(static_cast<size_t>(n) + 1), u(g.size());
        for (auto& v : g) {
            const unsigned pick = rng() % 16;
            v = pick == 0 ? -0.0f : pick == 1 ? kInf : pick == 2 ? -kInf : pick < 8 ? gate(rng) / 20.0f : gate(rng);
        }
        for (auto& v : u) v = value(rng);
        std::vector<float> want(g.size()), got(g.size());
        set_active_isa(Isa::scalar);
        attn_kernels()->swiglu(g.data() + 1, u.data() + 1, want.data() + 1, n);
        set_active_isa(isa);
        attn_kernels()->swiglu(g.data() + 1, u.data() + 1, got.data() + 1, n);
        ASSERT_EQ(std::memcmp(want.data() + 1, got.data() + 1, static_cast<size_t>(n) * sizeof(float)), 0) << "n=" << n;
        for (int64_t i = 1; i <= n; ++i)  // and the scalar definition is silu(g) * u
            ASSERT_EQ(std::bit_cast<uint32_t>(want[static_cast<size_t>(i)]),
                      std::bit_cast<uint32_t>(silu(g[static_cast<size_t>(i)]) * u[static_cast<size_t>(i)]));
    }

    // accumulate: head sizes with and without a tail, partial blocks, zero weights whose value
    // rows hold NaN (a skipped cell must not be read into the sum).
    for (int64_t dv : {1, 7, 16, 40, 64, 72, 128, 256}) {
        for (int64_t nb : {1, 5, 32}) {
            const int64_t stride = dv + 3;
            std::vector<float> v(static_cast<size_t>(nb * stride)), p(static_cast<size_t>(nb)), acc0(static_cast<size_t>(dv));
            for (auto& x : v) x = value(rng);
            for (auto& x : acc0) x = value(rng);
            for (int64_t j = 0; j < nb; ++j) {
                p[static_cast<size_t>(j)] = j % 4 == 2 ? 0.0f : std::abs(value(rng));
                if (p[static_cast<size_t>(j)] == 0.0f)
                    for (int64_t i = 0; i < dv; ++i) v[static_cast<size_t>(j * stride + i)] = std::nanf("");
            }
            auto want = acc0, got = acc0;
            set_active_isa(Isa::scalar);
            attn_kernels()->accumulate(dv, want.data(), p.data(), nb, v.data(), stride);
            set_active_isa(isa);
            attn_kernels()->accumulate(dv, got.data(), p.data(), nb, v.data(), stride);
            for (float x : want) ASSERT_FALSE(std::isnan(x)) << "a skipped cell was read";
            ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0) << "dv=" << dv << " nb=" << nb;
            // and the scalar definition is the fma chain it promises, in cell order
            for (int64_t i = 0; i < dv; ++i) {
                float a = acc0[static_cast<size_t>(i)];
                for (int64_t j = 0; j < nb; ++j)
                    if (p[static_cast<size_t>(j)] != 0.0f)
                        a = std::fma(p[static_cast<size_t>(j)], v[static_cast<size_t>(j * stride + i)], a);
                ASSERT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(want[static_cast<size_t>(i)]));
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, AttnSteps, ::testing::ValuesIn(test::kAllIsas),
                         [](const auto& p) { return std::string(isa_name(p.param)); });

}  // namespace
}  // namespace pocket::kernels
