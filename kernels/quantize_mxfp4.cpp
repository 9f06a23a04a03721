// MXFP4 (OCP microscaling): per 32 weights, a power-of-two scale e (E8M0) chosen from the
// block's max |x| (so the largest e2m1 level, 6, covers it up to rounding) and each weight's
// nearest level, as ggml's reference quantizer does. The importance matrix is ignored (as in ggml).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/row_functions.hpp"

#include <algorithm>
#include <cmath>

namespace pocket::kernels {
namespace {

// The level nearest to x at scale d (the first of equals: lowest index).
uint8_t nearest_mxfp4_level(float x, float d) {
    uint8_t best = 0;
    float best_err = std::fabs(static_cast<float>(kMxfp4Values[0]) * d - x);
    for (uint8_t i = 1; i < 16; ++i) {
        const float err = std::fabs(static_cast<float>(kMxfp4Values[i]) * d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

// E8M0 exponent: 2^(e-127) ~ amax / 4 (levels are doubled, the scale halved). Clamped to the
// format's range: ggml's cast of an out-of-range value is undefined; only amax < 2^-125 or
// an infinite amax get there.
uint8_t mxfp4_exponent(float amax) {
    if (!(amax > 0)) return 0;
    const float e = std::floor(std::log2(amax)) - 2 + 127;
    return static_cast<uint8_t>(std::clamp(e, 0.0f, 254.0f));
}

}  // namespace

void quantize_row_mxfp4(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_mxfp4*>(vy);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        y[i].e = mxfp4_exponent(amax);
        const float d = e8m0_to_f32_half(y[i].e);
        for (int j = 0; j < kQK / 2; ++j)
            y[i].qs[j] = static_cast<uint8_t>(nearest_mxfp4_level(x[j], d) | (nearest_mxfp4_level(x[j + kQK / 2], d) << 4));
    }
}

}  // namespace pocket::kernels
