// TQ1_0 and TQ2_0 (ternary weights, for BitNet b1.58-style models): every weight becomes
// -d, 0 or +d with d = max |x| of its 256, as ggml's reference quantizers do. An importance
// matrix cannot change a ternary choice, so it is ignored (as in ggml).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/row_functions.hpp"

#include <cmath>

namespace pocket::kernels {
namespace {

float block_amax(const float* x) {
    float amax = 0;
    for (int j = 0; j < kQKK; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    return amax;
}

// -1, 0, +1 -> 0, 1, 2 (round half away from zero, as lroundf).
inline int trit(float v, float id) { return static_cast<int>(std::lround(v * id)) + 1; }

// `count` trits (the first most significant) as a base-3 fraction of 256, rounded up, so that
// dequantization reads trit k back as (byte * 3^k mod 256) * 3 >> 8.
inline uint8_t pack_trits(const int* trits, int count) {
    unsigned q = 0;
    for (int k = 0; k < count; ++k) q = q * 3 + static_cast<unsigned>(trits[k]);
    for (int k = count; k < 5; ++k) q *= 3;  // fewer than 5: the first trit still leads
    return static_cast<uint8_t>((q * 256 + 242) / 243);
}

}  // namespace

void quantize_row_tq1_0(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_tq1_0*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, ++y) {
        const float d = block_amax(x);
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y->d = f32_to_fp16(d);
        int t[5];
        // qs[0..32): weights m + 32k of the first 160; qs[32..48): m + 16k of the next 80
        for (int m = 0; m < 32; ++m) {
            for (int k = 0; k < 5; ++k) t[k] = trit(x[m + 32 * k], id);
            y->qs[m] = pack_trits(t, 5);
        }
        x += 160;
        for (int m = 0; m < 16; ++m) {
            for (int k = 0; k < 5; ++k) t[k] = trit(x[m + 16 * k], id);
            y->qs[32 + m] = pack_trits(t, 5);
        }
        x += 80;
        // qh: 4 trits per byte, weights j + 4k of the last 16
        for (int j = 0; j < 4; ++j) {
            for (int k = 0; k < 4; ++k) t[k] = trit(x[j + 4 * k], id);
            y->qh[j] = pack_trits(t, 4);
        }
        x += 16;
    }
}

void quantize_row_tq2_0(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_tq2_0*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, ++y) {
        const float d = block_amax(x);
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y->d = f32_to_fp16(d);
        // byte m of each 32: weights m, m + 32, m + 64, m + 96 of the 128, two bits each
        for (int j = 0; j < kQKK / 4; j += 32, x += 128)
            for (int m = 0; m < 32; ++m) {
                unsigned q = 0;
                for (int k = 0; k < 4; ++k) q |= static_cast<unsigned>(trit(x[m + 32 * k], id) & 3) << (2 * k);
                y->qs[j + m] = static_cast<uint8_t>(q);
            }
    }
}

}  // namespace pocket::kernels
