// Repacked Q4_0, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS (8 rows interleaved): same
// bytes reordered (Q6_K: same bits), and a GEMM that gives exactly the bits of vec_dot on the
// original rows, on every ISA this CPU runs.
#include "dot_test_cases.hpp"
#include "kernel_test_data.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace pocket::kernels {
namespace {

using test::DotCase;

class Repack : public ::testing::TestWithParam<std::tuple<GgmlType, Isa, DotCase>> {};

TEST_P(Repack, GemmBitwiseEqualToVecDot) {
    const auto [type, isa, c] = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    test::IsaGuard guard;
    set_active_isa(isa);
    const RepackKernels* rk = repack_kernels(type);
    ASSERT_NE(rk, nullptr);
    ASSERT_EQ(rk->rows_per_group, 8);
    EXPECT_EQ(repack_kernels(GgmlType::Q8_K), nullptr);
    const TypeKernels* k = type_kernels(type);
    // Super-block types: 1, 2, 9 and 139 super-blocks; the 32-blocks: odd counts and rows long enough to be
    // walked in two or three K chunks (4128 with 16-row tiles, 5504 with 8-row tiles too).
    // The longest rows make the columns' activations outgrow one 512 KiB column block (12
    // columns fit), so m = 13 spans two blocks.
    const bool k_quant = test::block_size(type) == 256;
    const std::vector<int64_t> lengths = k_quant ? std::vector<int64_t>{256, 512, 2304, 35584}
                                                                : std::vector<int64_t>{32, 224, 288, 4128, 5504, 38016};
    for (int64_t n : lengths) {
        constexpr int64_t kRows = 24, kM = 13;
        const auto d = test::make_dot_rows(type, c, n, kRows, kM, 5);
        // padded source stride: pack must honour w_stride
        const size_t ws = d.w_row_bytes + 16;
        std::vector<uint8_t> w(ws * kRows);
        for (int64_t i = 0; i < kRows; ++i)
            std::memcpy(&w[ws * static_cast<size_t>(i)], &d.w[d.w_row_bytes * static_cast<size_t>(i)], d.w_row_bytes);
        ASSERT_EQ(rk->packed_bytes(kRows, n), d.w.size());
        std::vector<uint8_t> packed(rk->packed_bytes(kRows, n));
        rk->pack(w.data(), ws, kRows, n, packed.data());
        // the same multiset of bytes, reordered; Q6_K moves bits between its level bytes, so there
        // the same number of set bits (the GEMM below checks where each level went)
        if (type == GgmlType::Q6_K) {
            const auto ones = [](const std::vector<uint8_t>& v) {
                int64_t s = 0;
                for (uint8_t b : v) s += std::popcount(b);
                return s;
            };
            EXPECT_EQ(ones(d.w), ones(packed));
        } else {
            auto sorted_a = d.w, sorted_b = packed;
            std::sort(sorted_a.begin(), sorted_a.end());
            std::sort(sorted_b.begin(), sorted_b.end());
            EXPECT_EQ(sorted_a, sorted_b);
        }

        for (int64_t m : {1, 2, 3, 4, 5, 7, 10, 13}) {  // every column tile width, every tail width
            const size_t cs = kRows + 2;
            std::vector<float> out(cs * static_cast<size_t>(m), -7.f);
            // the second group alone, as a thread handling rows 8..15 would call it
            const size_t group_bytes = rk->packed_bytes(8, n);
            rk->gemm(n, packed.data(), kRows, d.a.data(), d.a_row_bytes, m, out.data(), cs);
            std::vector<float> part(8 * static_cast<size_t>(m));
            rk->gemm(n, packed.data() + group_bytes, 8, d.a.data(), d.a_row_bytes, m, part.data(), 8);
            for (int64_t j = 0; j < m; ++j) {
                for (int64_t i = 0; i < kRows; ++i) {
                    float want;
                    k->vec_dot(n, &want, &d.w[d.w_row_bytes * static_cast<size_t>(i)], &d.a[d.a_row_bytes * static_cast<size_t>(j)]);
                    const float got = out[cs * static_cast<size_t>(j) + static_cast<size_t>(i)];
                    ASSERT_EQ(std::memcmp(&got, &want, 4), 0)
                        << isa_name(isa) << " n=" << n << " m=" << m << " (" << i << "," << j << "): " << got << " vs " << want;
                    if (i >= 8 && i < 16) {
                        const float g2 = part[8 * static_cast<size_t>(j) + static_cast<size_t>(i - 8)];
                        ASSERT_EQ(std::memcmp(&g2, &want, 4), 0) << "group offset call differs";
                    }
                }
                for (size_t i = kRows; i < cs; ++i) ASSERT_EQ(out[cs * static_cast<size_t>(j) + i], -7.f);
            }
        }
    }
}

// mul_mat calls a repacked GEMM once per chunk of rows inside a SameActivations scope, and the
// GEMM may keep what it derived from the activations between those calls. Only there: the same
// buffer with new contents, outside a scope or in a new one, must give the new rows' results.
TEST_P(Repack, ActivationsDerivedAgainOutsideAndInEachScope) {
    const auto [type, isa, c] = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    if (c != DotCase::gaussian) GTEST_SKIP() << "one data case is enough";
    test::IsaGuard guard;
    set_active_isa(isa);
    const RepackKernels* rk = repack_kernels(type);
    const TypeKernels* k = type_kernels(type);
    constexpr int64_t kRows = 24, kM = 5, n = 2304;
    const auto first = test::make_dot_rows(type, c, n, kRows, kM, 5);
    const auto second = test::make_dot_rows(type, c, n, kRows, kM, 6);
    std::vector<uint8_t> packed(rk->packed_bytes(kRows, n));
    rk->pack(first.w.data(), first.w_row_bytes, kRows, n, packed.data());
    std::vector<uint8_t> acts = first.a;  // one buffer, refilled between calls
    const size_t group_bytes = rk->packed_bytes(8, n);
    // Rows [8 * g0, 8 * g1) for m columns, checked against vec_dot on the buffer's current rows.
    // Columns from j0 (activation rows j0 .. j0 + m - 1 of the buffer).
    auto check = [&](int64_t g0, int64_t g1, int64_t m, const char* when, int64_t j0 = 0) {
        const int64_t rows = 8 * (g1 - g0);
        const uint8_t* a = acts.data() + first.a_row_bytes * static_cast<size_t>(j0);
        std::vector<float> out(static_cast<size_t>(rows * m));
        rk->gemm(n, packed.data() + static_cast<size_t>(g0) * group_bytes, rows, a, first.a_row_bytes, m, out.data(),
                 static_cast<size_t>(rows));
        for (int64_t j = 0; j < m; ++j)
            for (int64_t i = 0; i < rows; ++i) {
                float want;
                k->vec_dot(n, &want, &first.w[first.w_row_bytes * static_cast<size_t>(8 * g0 + i)],
                           a + first.a_row_bytes * static_cast<size_t>(j));
                const float got = out[static_cast<size_t>(j * rows + i)];
                ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << isa_name(isa) << " " << when << " m=" << m << " (" << i << "," << j << ")";
            }
    };
    auto refill = [&](const std::vector<uint8_t>& from) { std::copy(from.begin(), from.end(), acts.begin()); };
    for (int64_t m : {int64_t{1}, kM}) {
        refill(first.a);
        check(0, 3, m, "no scope, first rows");
        refill(second.a);
        check(0, 3, m, "no scope, the buffer refilled");
        {
            const SameActivations scope;
            check(0, 1, m, "scope, first chunk");
            check(1, 3, m, "scope, next chunk");
        }
        refill(first.a);
        const SameActivations next;
        check(1, 3, m, "a new scope, the buffer refilled");
    }

    // In one scope, other rows of the same unchanged buffer (new contents, so that what an
    // earlier scope derived would be wrong): more of them, or as many from another row.
    refill(second.a);
    const SameActivations scope;
    check(0, 3, 1, "scope, one column");
    check(0, 3, kM, "scope, more columns");
    check(0, 3, kM - 1, "scope, one column fewer");
    check(0, 3, kM - 1, "scope, as many from the next row", 1);
}

INSTANTIATE_TEST_SUITE_P(AllIsas, Repack,
                         ::testing::Combine(::testing::Values(GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                                                              GgmlType::IQ4_XS, GgmlType::Q2_K, GgmlType::Q3_K),
                                            ::testing::ValuesIn(test::kAllIsas),
                                            ::testing::Values(DotCase::gaussian, DotCase::zeros, DotCase::extremes,
                                                              DotCase::random_bytes)),
                         [](const auto& p) {
                             return std::string(test::type_name(std::get<0>(p.param))) + "_" + isa_name(std::get<1>(p.param)) + "_" +
                                    test::dot_case_name(std::get<2>(p.param));
                         });

}  // namespace
}  // namespace pocket::kernels
