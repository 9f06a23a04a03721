// Q8_0's and Q4_0's GEMMs on AMX tiles (kernels/x86/amx_32.cpp): the bits of the scalar vec_dot for
// every output, called directly (whole sixteens of columns) and through the AVX-512 GEMM
// (sixteens on tiles, the rest in zmm registers). Skipped where the CPU or OS has no AMX.
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"
#include "kernels/repack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace pocket::kernels {
namespace {

using test::DotCase;

#if defined(__x86_64__)
class AmxGemm : public ::testing::TestWithParam<std::tuple<GgmlType, DotCase>> {};

TEST_P(AmxGemm, BitwiseEqualToScalarVecDot) {
    if (!amx_int8_usable()) GTEST_SKIP() << "AMX-INT8 is not usable on this CPU or OS (or POCKET_AMX=0)";
    const auto [type, c] = GetParam();
    const PackedGemmFn tiles = type == GgmlType::Q8_0 ? q8_0x8_gemm_amx : q4_0x8_gemm_amx;
    test::IsaGuard guard;
    // 24 rows: a pair of records and a single one; 1 to 129 blocks, 8k + 1 leaving lane 0
    // one block more than the others, and fewer blocks than lanes.
    // 128 and 133 columns of 4128: two of the kernel's ~512 KiB column blocks.
    constexpr int64_t kRows = 24, kM = 133;
    for (int64_t n : {32, 224, 288, 4128}) {
        const auto d = test::make_dot_rows(type, c, n, kRows, kM, 11);
        set_active_isa(Isa::avx512);
        const RepackKernels* rk = repack_kernels(type);
        std::vector<uint8_t> packed(rk->packed_bytes(kRows, n));
        rk->pack(d.w.data(), d.w_row_bytes, kRows, n, packed.data());
        set_active_isa(Isa::scalar);
        const TypeKernels* k = type_kernels(type);
        for (int64_t m : {16, 32, 128, 17, 37, 133}) {
            const size_t cs = kRows + 3;
            std::vector<float> out(cs * static_cast<size_t>(m), -7.f);
            // rk->gemm: the AVX-512 entry, AMX for the sixteens and zmm for the rest
            (m % 16 == 0 ? tiles : rk->gemm)(n, packed.data(), kRows, d.a.data(), d.a_row_bytes, m, out.data(), cs);
            for (int64_t j = 0; j < m; ++j) {
                for (int64_t i = 0; i < kRows; ++i) {
                    float want;
                    k->vec_dot(n, &want, &d.w[d.w_row_bytes * static_cast<size_t>(i)], &d.a[d.a_row_bytes * static_cast<size_t>(j)]);
                    const float got = out[cs * static_cast<size_t>(j) + static_cast<size_t>(i)];
                    ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << "n=" << n << " m=" << m << " (" << i << "," << j << "): " << got << " vs " << want;
                }
                for (size_t i = kRows; i < cs; ++i) ASSERT_EQ(out[cs * static_cast<size_t>(j) + i], -7.f) << "wrote past the rows";
            }
        }
    }
}

// The tiles' copy of the activations is kept between the calls of one SameActivations scope
// (mul_mat's chunks of rows), and only there: the same buffer refilled, outside a scope or in
// a new one, must give the new rows' results.
TEST(AmxGemmScope, ActivationsGatheredAgainOutsideAndInEachScope) {
    if (!amx_int8_usable()) GTEST_SKIP() << "AMX-INT8 is not usable on this CPU or OS (or POCKET_AMX=0)";
    test::IsaGuard guard;
    constexpr int64_t kRows = 24, kM = 32, n = 2304;
    const auto first = test::make_dot_rows(GgmlType::Q8_0, DotCase::gaussian, n, kRows, kM, 5);
    const auto second = test::make_dot_rows(GgmlType::Q8_0, DotCase::gaussian, n, kRows, kM, 6);
    set_active_isa(Isa::avx512);
    const RepackKernels* rk = repack_kernels(GgmlType::Q8_0);
    std::vector<uint8_t> packed(rk->packed_bytes(kRows, n));
    rk->pack(first.w.data(), first.w_row_bytes, kRows, n, packed.data());
    set_active_isa(Isa::scalar);
    const TypeKernels* k = type_kernels(GgmlType::Q8_0);
    std::vector<uint8_t> acts = first.a;  // one buffer, refilled between calls
    const size_t group_bytes = rk->packed_bytes(8, n);
    auto check = [&](int64_t g0, int64_t g1, const char* when) {
        const int64_t rows = 8 * (g1 - g0);
        std::vector<float> out(static_cast<size_t>(rows * kM));
        q8_0x8_gemm_amx(n, packed.data() + static_cast<size_t>(g0) * group_bytes, rows, acts.data(), first.a_row_bytes, kM,
                        out.data(), static_cast<size_t>(rows));
        for (int64_t j = 0; j < kM; ++j)
            for (int64_t i = 0; i < rows; ++i) {
                float want;
                k->vec_dot(n, &want, &first.w[first.w_row_bytes * static_cast<size_t>(8 * g0 + i)],
                           acts.data() + first.a_row_bytes * static_cast<size_t>(j));
                const float got = out[static_cast<size_t>(j * rows + i)];
                ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << when << " (" << i << "," << j << ")";
            }
    };
    auto refill = [&](const std::vector<uint8_t>& from) { std::copy(from.begin(), from.end(), acts.begin()); };
    check(0, 3, "no scope, first rows");
    refill(second.a);
    check(0, 3, "no scope, the buffer refilled");
    {
        const SameActivations scope;
        check(0, 1, "scope, first chunk");
        check(1, 3, "scope, next chunk");
    }
    refill(first.a);
    const SameActivations next;
    check(0, 3, "a new scope, the buffer refilled");
}

INSTANTIATE_TEST_SUITE_P(Types, AmxGemm, ::testing::Combine(::testing::Values(GgmlType::Q8_0, GgmlType::Q4_0), ::testing::ValuesIn(test::kAllDotCases)),
                         [](const auto& p) {
                             return std::string(std::get<0>(p.param) == GgmlType::Q8_0 ? "Q8_0_" : "Q4_0_") + test::dot_case_name(std::get<1>(p.param));
                         });
#endif

}  // namespace
}  // namespace pocket::kernels
