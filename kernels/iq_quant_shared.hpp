#pragma once
// Steps the grid i-quant quantizers (quantize_iq1.cpp, quantize_iq2.cpp, quantize_iq3.cpp)
// share, in ggml's float expressions (their bytes must stay llama-quantize's).
#include "kernels/blocks.hpp"

#include <cstdint>

namespace pocket::kernels::iq {

// ggml's MAX(a, b): `a > b ? a : b` (std::max keeps a NaN `a` where ggml takes `b`).
inline float ggml_max(float a, float b) { return a > b ? a : b; }

// factor * mean(x^2) over a super-block: the sigma2 of the error weights (ggml uses 2, and 1
// for IQ2_XXS / IQ2_XS).
inline float superblock_sigma2(const float* x, float factor) {
    float sumx2 = 0;
    for (int i = 0; i < kQKK; ++i) sumx2 += x[i] * x[i];
    return factor * sumx2 / kQKK;
}

// Splits 8 weights into magnitudes (xval) and sign bits (bit i: weight i negative). Formats
// that store 7 sign bits imply an even count of minus signs (even_parity): with an odd count
// the weight that costs least to flip (smallest w * x^2) keeps the wrong sign, its xval
// turning negative, and only the low 7 bits are returned.
inline uint8_t split_signs8(const float* x, const float* w, float* xval, bool even_parity) {
    uint8_t s = 0;
    int nflip = 0;
    for (int i = 0; i < 8; ++i) {
        if (x[i] >= 0) {
            xval[i] = x[i];
        } else {
            xval[i] = -x[i];
            ++nflip;
            s = static_cast<uint8_t>(s | (1 << i));
        }
    }
    if (!even_parity) return s;
    if (nflip % 2) {
        int imin = 0;
        float min = w[0] * x[0] * x[0];
        for (int i = 1; i < 8; ++i) {
            const float ax = w[i] * x[i] * x[i];
            if (ax < min) {
                min = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s = static_cast<uint8_t>(s ^ (1 << imin));
    }
    return static_cast<uint8_t>(s & 127);
}

}  // namespace pocket::kernels::iq
