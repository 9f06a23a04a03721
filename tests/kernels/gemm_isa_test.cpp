// GEMM must give, for every output, exactly the bits vec_dot gives on the same ISA, so that
// results never depend on batch size. Odd tile remainders, padded strides, and the
// untouched padding of C are all checked.
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>

namespace pocket::kernels {
namespace {

using test::DotCase;

// Every tile shape of gemm over rows x m against vec_dot, at row length n.
void check_every_shape(const TypeKernels* k, Isa isa, GgmlType type, DotCase c, int64_t n) {
    constexpr int64_t kMaxRows = 13, kMaxM = 11;
    const auto d = test::make_dot_rows(type, c, n, kMaxRows, kMaxM, 77);
    // Re-lay rows with padded strides, so a kernel that assumes packed rows fails.
    const size_t w_stride = d.w_row_bytes + 64, a_stride = d.a_row_bytes + 32;
    std::vector<uint8_t> w(w_stride * kMaxRows), a(a_stride * kMaxM);
    for (int64_t i = 0; i < kMaxRows; ++i)
        std::memcpy(&w[w_stride * static_cast<size_t>(i)], &d.w[d.w_row_bytes * static_cast<size_t>(i)], d.w_row_bytes);
    for (int64_t j = 0; j < kMaxM; ++j)
        std::memcpy(&a[a_stride * static_cast<size_t>(j)], &d.a[d.a_row_bytes * static_cast<size_t>(j)], d.a_row_bytes);

    for (int64_t rows : {1, 2, 3, 4, 5, 8, 13}) {
        for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 11}) {
            const size_t c_stride = static_cast<size_t>(rows) + 3;
            std::vector<float> out(c_stride * static_cast<size_t>(m), -12345.f);
            k->gemm(n, w.data(), w_stride, rows, a.data(), a_stride, m, out.data(), c_stride);
            for (int64_t j = 0; j < m; ++j) {
                for (int64_t i = 0; i < rows; ++i) {
                    float want;
                    k->vec_dot(n, &want, &w[w_stride * static_cast<size_t>(i)], &a[a_stride * static_cast<size_t>(j)]);
                    const float got = out[static_cast<size_t>(j) * c_stride + static_cast<size_t>(i)];
                    ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << test::type_name(type) << " " << isa_name(isa) << " rows="
                                                              << rows << " m=" << m << " at (" << i << "," << j << "): "
                                                              << got << " vs " << want;
                }
                for (size_t i = static_cast<size_t>(rows); i < c_stride; ++i)
                    ASSERT_EQ(out[static_cast<size_t>(j) * c_stride + i], -12345.f) << "gemm wrote past rows";
            }
        }
    }
}

class Gemm : public ::testing::TestWithParam<std::tuple<Isa, GgmlType, DotCase>> {};

TEST_P(Gemm, BitwiseEqualToVecDotForEveryShape) {
    const auto [isa, type, c] = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    test::IsaGuard guard;
    set_active_isa(isa);
    const TypeKernels* k = type_kernels(type);
    ASSERT_NE(k->gemm, nullptr);
    // One length per type; the float types also two whole 32-element steps (the attention's
    // 64-long heads) and a zero-padded tail, which their tiles take by separate paths.
    std::vector<int64_t> lengths{test::dot_lengths(type)[3]};
    if (test::block_size(type) == 1) lengths.insert(lengths.end(), {64, 100});
    for (const int64_t n : lengths) {
        SCOPED_TRACE("n=" + std::to_string(n));
        check_every_shape(k, isa, type, c, n);
        if (HasFatalFailure()) return;
    }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Gemm,
                         ::testing::Combine(::testing::ValuesIn(test::kAllIsas), ::testing::ValuesIn(test::kDotTypes),
                                            ::testing::Values(DotCase::gaussian, DotCase::extremes,
                                                              DotCase::random_bytes)),
                         [](const auto& p) {
                             return std::string(isa_name(std::get<0>(p.param))) + "_" +
                                    test::type_name(std::get<1>(p.param)) + "_" +
                                    test::dot_case_name(std::get<2>(p.param));
                         });

}  // namespace
}  // namespace pocket::kernels
