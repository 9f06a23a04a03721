// Q8_0's and Q4_0's GEMMs on AMX tiles (kernels/x86/amx_32.cpp): the bits of the scalar vec_dot for
// every output, called directly (whole sixteens of columns) and through the AVX-512 GEMM
// (sixteens on tiles, the rest in zmm registers). Skipped where the CPU or OS has no AMX.
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"
#include "kernels/repack.hpp"

#include <gtest/gtest.h>

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
            if (m % 16 == 0) {
                tiles(n, packed.data(), kRows, d.a.data(), d.a_row_bytes, m, out.data(), cs);
            } else {
                set_active_isa(Isa::avx512);
                repack_kernels(type)->gemm(n, packed.data(), kRows, d.a.data(), d.a_row_bytes, m, out.data(), cs);
                set_active_isa(Isa::scalar);
            }
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

INSTANTIATE_TEST_SUITE_P(Types, AmxGemm, ::testing::Combine(::testing::Values(GgmlType::Q8_0, GgmlType::Q4_0), ::testing::ValuesIn(test::kAllDotCases)),
                         [](const auto& p) {
                             return std::string(std::get<0>(p.param) == GgmlType::Q8_0 ? "Q8_0_" : "Q4_0_") + test::dot_case_name(std::get<1>(p.param));
                         });
#endif

}  // namespace
}  // namespace pocket::kernels
