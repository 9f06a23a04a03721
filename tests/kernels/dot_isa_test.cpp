// Dot products. The scalar reference is checked against a float64 dot of the dequantized
// rows (tolerance below); every SIMD ISA this CPU runs must then reproduce the scalar bits
// exactly, because all ISAs follow the one summation order of kernels/dot_order.hpp.
// An ISA this CPU (or build) lacks is skipped, saying so.
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

namespace pocket::kernels {
namespace {

using test::DotCase;

// Tolerance of the float32 scalar dot against float64, relative to sum |x_i * y_i|: the
// float steps are one rounding per element (F32/F16/BF16, fma into 32 lanes) or per block
// (scale products, fma into 8 lanes), so the error grows like (n / lanes) * 2^-24; 2e-5
// covers n = 4128 with a margin. Q4_1/Q5_1 also use Q8_1's s = fp16(d * sum q), rounded
// to 11 bits, so their bound adds sum over blocks of |m_x| * |s_y - d_y * sum q_y|.
constexpr double kRelTol = 2e-5;

double offset_rounding_bound(GgmlType t, const uint8_t* w, const uint8_t* a, int64_t n) {
    if (t != GgmlType::Q4_1 && t != GgmlType::Q5_1) return 0;
    const size_t wb = t == GgmlType::Q4_1 ? sizeof(block_q4_1) : sizeof(block_q5_1);
    double bound = 0;
    for (int64_t b = 0; b < n / 32; ++b) {
        half m;
        std::memcpy(&m, w + wb * static_cast<size_t>(b) + 2, 2);
        const auto& y = reinterpret_cast<const block_q8_1*>(a)[b];
        int sum = 0;
        for (int8_t q : y.qs) sum += q;
        bound += std::fabs(fp16_to_f32(m)) * std::fabs(fp16_to_f32(y.s) - static_cast<double>(fp16_to_f32(y.d)) * sum);
    }
    return bound * 1.01;
}

class ScalarDot : public ::testing::TestWithParam<std::tuple<GgmlType, DotCase>> {};

TEST_P(ScalarDot, MatchesFloat64OfDequantizedRows) {
    const auto [type, c] = GetParam();
    test::IsaGuard guard;
    set_active_isa(Isa::scalar);
    const TypeKernels* k = type_kernels(type);
    ASSERT_NE(k, nullptr);
    ASSERT_NE(k->vec_dot, nullptr);
    uint32_t seed = 1;
    for (int64_t n : test::dot_lengths(type)) {
        const auto rows = test::make_dot_rows(type, c, n, 1, 1, seed++);
        std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
        dequantize_row(type, rows.w.data(), x.data(), n);
        dequantize_row(k->vec_dot_type, rows.a.data(), y.data(), n);
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < n; ++i) {
            ref += static_cast<double>(x[static_cast<size_t>(i)]) * y[static_cast<size_t>(i)];
            mag += std::fabs(static_cast<double>(x[static_cast<size_t>(i)]) * y[static_cast<size_t>(i)]);
        }
        float got = NAN;
        k->vec_dot(n, &got, rows.w.data(), rows.a.data());
        const double tol = kRelTol * mag + offset_rounding_bound(type, rows.w.data(), rows.a.data(), n) + 1e-30;
        EXPECT_NEAR(got, ref, tol) << test::type_name(type) << " n=" << n;
    }
}

class SimdDot : public ::testing::TestWithParam<std::tuple<Isa, GgmlType, DotCase>> {};

TEST_P(SimdDot, BitwiseEqualToScalar) {
    const auto [isa, type, c] = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    test::IsaGuard guard;
    uint32_t seed = 100;
    for (int64_t n : test::dot_lengths(type)) {
        const auto rows = test::make_dot_rows(type, c, n, 1, 1, seed++);
        set_active_isa(Isa::scalar);
        float want = NAN, got = NAN;
        type_kernels(type)->vec_dot(n, &want, rows.w.data(), rows.a.data());
        set_active_isa(isa);
        ASSERT_EQ(active_isa(), isa);
        type_kernels(type)->vec_dot(n, &got, rows.w.data(), rows.a.data());
        uint32_t wb, gb;
        std::memcpy(&wb, &want, 4);
        std::memcpy(&gb, &got, 4);
        EXPECT_EQ(gb, wb) << test::type_name(type) << " n=" << n << ": " << isa_name(isa) << " " << got << " vs scalar "
                          << want;
    }
}

std::string type_case_name(GgmlType t, DotCase c) { return std::string(test::type_name(t)) + "_" + test::dot_case_name(c); }

INSTANTIATE_TEST_SUITE_P(AllTypes, ScalarDot,
                         ::testing::Combine(::testing::ValuesIn(test::kDotTypes), ::testing::ValuesIn(test::kAllDotCases)),
                         [](const auto& p) { return type_case_name(std::get<0>(p.param), std::get<1>(p.param)); });

INSTANTIATE_TEST_SUITE_P(AllIsas, SimdDot,
                         ::testing::Combine(::testing::ValuesIn(test::kAllIsas), ::testing::ValuesIn(test::kDotTypes),
                                            ::testing::ValuesIn(test::kAllDotCases)),
                         [](const auto& p) {
                             return std::string(isa_name(std::get<0>(p.param))) + "_" +
                                    type_case_name(std::get<1>(p.param), std::get<2>(p.param));
                         });

TEST(Dispatch, EveryDotTypeHasKernelsOnEverySupportedIsa) {
    test::IsaGuard guard;
    for (Isa isa : test::kAllIsas) {
        if (!isa_supported(isa)) continue;
        set_active_isa(isa);
        for (GgmlType t : test::kDotTypes) {
            const TypeKernels* k = type_kernels(t);
            ASSERT_NE(k, nullptr) << test::type_name(t);
            EXPECT_NE(k->vec_dot, nullptr) << test::type_name(t) << " on " << isa_name(isa);
            EXPECT_NE(k->gemm, nullptr) << test::type_name(t) << " on " << isa_name(isa);
            EXPECT_NE(k->dequantize_row, nullptr);
        }
    }
    EXPECT_TRUE(isa_supported(Isa::scalar));
    EXPECT_EQ(type_kernels(GgmlType::I32), nullptr);
}

// Which types each SIMD ISA accelerates (the rest fall back to the scalar reference, which
// gives the same bits, only slower). Fails when a kernel silently drops out of the table.
TEST(Dispatch, SimdTablesReplaceTheScalarKernelsTheyShould) {
    test::IsaGuard guard;
    set_active_isa(Isa::scalar);
    VecDotFn scalar_dot[64] = {};
    for (GgmlType t : test::kDotTypes) scalar_dot[static_cast<int>(t)] = type_kernels(t)->vec_dot;
    const GgmlType x86_simd[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                                 GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::IQ4_NL, GgmlType::Q4_K,
                                 GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_XS,
                                 GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ3_XXS, GgmlType::IQ3_S,
                                 GgmlType::IQ1_S, GgmlType::IQ1_M, GgmlType::MXFP4};
    const GgmlType neon_simd[] = {GgmlType::F32,     GgmlType::F16,    GgmlType::Q4_0,  GgmlType::Q8_0,
                                  GgmlType::Q4_K,    GgmlType::Q5_K,   GgmlType::Q6_K,  GgmlType::MXFP4,
                                  GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ3_XXS,
                                  GgmlType::IQ3_S,   GgmlType::IQ1_S,  GgmlType::IQ1_M};
    for (Isa isa : {Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::neon}) {
        if (!isa_supported(isa)) continue;
        set_active_isa(isa);
        auto check = [&](const auto& list) {
            for (GgmlType t : list)
                EXPECT_NE(type_kernels(t)->vec_dot, scalar_dot[static_cast<int>(t)])
                    << test::type_name(t) << " should have a " << isa_name(isa) << " kernel";
        };
        if (isa == Isa::neon) check(neon_simd);
        else check(x86_simd);
    }
    // AVX-VNNI has its own build of every x86 kernel (its integer dots are vpdpbusd), not AVX2's.
    if (isa_supported(Isa::avxvnni)) {
        set_active_isa(Isa::avx2);
        VecDotFn avx2_dot[64] = {};
        for (GgmlType t : x86_simd) avx2_dot[static_cast<int>(t)] = type_kernels(t)->vec_dot;
        set_active_isa(Isa::avxvnni);
        for (GgmlType t : x86_simd)
            EXPECT_NE(type_kernels(t)->vec_dot, avx2_dot[static_cast<int>(t)]) << test::type_name(t) << ": avxvnni runs the avx2 kernel";
        EXPECT_NE(repack_kernels(GgmlType::Q4_0)->gemm, nullptr);
    }
}

}  // namespace
}  // namespace pocket::kernels
