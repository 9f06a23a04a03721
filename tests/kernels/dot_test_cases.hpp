#pragma once
// Inputs for the dot/GEMM tests: for a weight type, rows of weights and of activations
// (already in the paired type) from several generators, adversarial ones included.
#include "kernels/kernels.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace pocket::kernels::test {

enum class DotCase {
    gaussian,      // N(0,1) weights and activations
    zeros,         // all-zero rows (every scale 0)
    extremes,      // +-max magnitudes with mixed signs: saturates every level
    sparse,        // mostly zero blocks with large spikes
    random_bytes,  // weight bytes uniformly random except sane fp16 scales (every bit pattern)
};
inline constexpr DotCase kAllDotCases[] = {DotCase::gaussian, DotCase::zeros, DotCase::extremes, DotCase::sparse,
                                           DotCase::random_bytes};
std::string dot_case_name(DotCase c);

// The weight types with a dot product.
inline constexpr GgmlType kDotTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16,   GgmlType::Q4_0,
                                         GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,   GgmlType::Q8_0,
                                         GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                                         GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS, GgmlType::MXFP4,
                                         GgmlType::IQ2_XXS, GgmlType::IQ2_XS, GgmlType::IQ2_S, GgmlType::IQ3_XXS,
                                         GgmlType::IQ3_S, GgmlType::IQ1_S, GgmlType::IQ1_M, GgmlType::TQ1_0,
                                         GgmlType::TQ2_0};

// Row lengths to try for a type: several block counts, odd ones and tails included.
std::vector<int64_t> dot_lengths(GgmlType weight_type);

struct DotRows {
    int64_t n = 0;
    size_t w_row_bytes = 0, a_row_bytes = 0;
    std::vector<uint8_t> w, a;  // `rows` weight rows, `m` activation rows, packed
};
DotRows make_dot_rows(GgmlType weight_type, DotCase c, int64_t n, int64_t rows, int64_t m, uint32_t seed);

}  // namespace pocket::kernels::test
