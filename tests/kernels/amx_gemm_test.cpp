// Q8_0's GEMM on AMX tiles (kernels/x86/amx_q8_0.cpp): the bits of the scalar vec_dot for
// every output, called directly (whole sixteens of columns) and through the AVX-512 GEMM
// (sixteens on tiles, the rest in zmm registers). Skipped where the CPU or OS has no AMX.
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"
#include "kernels/repack.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace pocket::kernels {
namespace {

using test::DotCase;

#if defined(__x86_64__)
class AmxGemm : public ::testing::TestWithParam<DotCase> {};

TEST_P(AmxGemm, Q8_0BitwiseEqualToScalarVecDot) {
    if (!amx_int8_usable()) GTEST_SKIP() << "AMX-INT8 is not usable on this CPU or OS (or POCKET_AMX=0)";
    const DotCase c = GetParam();
    test::IsaGuard guard;
    // 24 rows: a pair of records and a single one; 1 to 129 blocks, 8k + 1 leaving lane 0
    // one block more than the others, and fewer blocks than lanes.
    // 128 and 133 columns of 4128: two of the kernel's ~512 KiB column blocks.
    constexpr int64_t kRows = 24, kM = 133;
    for (int64_t n : {32, 224, 288, 4128}) {
        const auto d = test::make_dot_rows(GgmlType::Q8_0, c, n, kRows, kM, 11);
        set_active_isa(Isa::avx512);
        const RepackKernels* rk = repack_kernels(GgmlType::Q8_0);
        std::vector<uint8_t> packed(rk->packed_bytes(kRows, n));
        rk->pack(d.w.data(), d.w_row_bytes, kRows, n, packed.data());
        set_active_isa(Isa::scalar);
        const TypeKernels* k = type_kernels(GgmlType::Q8_0);
        for (int64_t m : {16, 32, 128, 17, 37, 133}) {
            const size_t cs = kRows + 3;
            std::vector<float> out(cs * static_cast<size_t>(m), -7.f);
            if (m % 16 == 0) {
                q8_0x8_gemm_amx(n, packed.data(), kRows, d.a.data(), d.a_row_bytes, m, out.data(), cs);
            } else {
                set_active_isa(Isa::avx512);
                repack_kernels(GgmlType::Q8_0)->gemm(n, packed.data(), kRows, d.a.data(), d.a_row_bytes, m, out.data(), cs);
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

INSTANTIATE_TEST_SUITE_P(Cases, AmxGemm, ::testing::ValuesIn(test::kAllDotCases),
                         [](const auto& p) { return test::dot_case_name(p.param); });
#endif

}  // namespace
}  // namespace pocket::kernels
