#pragma once
// The summation order every ISA follows, so that a dot product has the same bits on
// scalar, AVX2, AVX-512 and NEON (and so GEMM equals vec_dot, whatever the batch):
//  - float rows (F32/F16/BF16): element i is fused-multiply-added into lane i % 32 of 32
//    accumulators (missing tail elements count as 0); the lanes are then folded in halves,
//    lane k += lane k + h for h = 16, 8, 4, 2, 1.
//  - 32-element block types: each block's integer dot is exact; block b adds
//    (dx*dy) * sumi (fused) into lane b % 8 of 8 accumulators, folded 4, 2, 1 the same way.
//  - K-quants and IQ4_XS: each 256-super-block's integer sums are exact; one accumulator
//    takes fma(d, isum) then fma(-dmin, summ) per super-block in order.
//  - grid i-quants (IQ1_*, IQ2_*, IQ3_*) and ternary types: the same single accumulator
//    (their sub-block scales 2s+1 and IQ1's shift, as 8 * level +- 1, keep the super-block
//    sum an exact integer); the type's constant factor (1/8, 1/4) multiplies it at the end.
// Integer sums are associative, so SIMD code may add them in any order; only the float
// steps above are fixed.
#include <cmath>

namespace pocket::kernels {

inline constexpr int kFloatLanes = 32;
inline constexpr int kBlockLanes = 8;

template <int N>
inline float fold_lanes(float* acc) {
    for (int h = N / 2; h >= 1; h /= 2)
        for (int k = 0; k < h; ++k) acc[k] = acc[k] + acc[k + h];
    return acc[0];
}

}  // namespace pocket::kernels
