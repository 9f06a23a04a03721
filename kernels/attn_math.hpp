#pragma once
// Internal: the scalar definitions of flash attention's inner steps (see AttnKernels in
// kernels.hpp). Each SIMD version runs, lane by lane, exactly these operations (fma, mul, add,
// compare-select), so every ISA gives these bits and an element's result never depends on
// where it sits in a vector.
#include <bit>
#include <cmath>
#include <cstdint>

namespace pocket::kernels::attn {

// e^x by Cody-Waite reduction x = n ln2 + r (|r| <= ln2/2) and the degree-7 Taylor
// polynomial of e^r (its truncation error, r^8/8!, is under 1e-8 relative), scaled by 2^n
// built in the exponent bits. Below kLo (where e^x leaves the normal floats) the result is 0,
// which is what a masked (-inf) score must give.
inline constexpr float kLo = -87.33654f;
inline constexpr float kHi = 88.0f;
inline constexpr float kLog2e = 1.44269504f;
inline constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
inline constexpr float kLn2Hi = 0.693359375f;  // few bits: n * kLn2Hi is exact
inline constexpr float kLn2Lo = -2.12194440e-4f;
inline constexpr float kC[8] = {1.0f, 1.0f, 0.5f, 1.0f / 6, 1.0f / 24, 1.0f / 120, 1.0f / 720, 1.0f / 5040};

inline float exp_scalar(float x) {
    float xc = x > kLo ? x : kLo;  // the operand order of maxps / minps, so NaN goes the same way
    xc = xc < kHi ? xc : kHi;
    const float z = std::fma(xc, kLog2e, kMagic);
    const float n = z - kMagic;
    float r = std::fma(n, -kLn2Hi, xc);
    r = std::fma(n, -kLn2Lo, r);
    float p = kC[7];
    for (int k = 6; k >= 0; --k) p = std::fma(p, r, kC[k]);
    const int32_t e = std::bit_cast<int32_t>(z) - std::bit_cast<int32_t>(kMagic);  // n as an integer
    const float y = p * std::bit_cast<float>((e + 127) << 23);
    return x < kLo ? 0.0f : y;
}

inline float silu_scalar(float x) { return x / (1.0f + exp_scalar(-x)); }

}  // namespace pocket::kernels::attn
