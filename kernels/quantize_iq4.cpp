// IQ4_NL / IQ4_XS quantization: non-linear 4-bit levels with a per-32 scale search, as
// llama-quantize runs it (7 scale trials each way, optional importance weights).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/quant_search.hpp"
#include "kernels/row_functions.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pocket::kernels {
namespace {

constexpr int kTries = 7;

// Index of the level nearest to x (ties to the lower level, as ggml).
int nearest_level(float x) {
    const int8_t* v = kIq4nlValues;
    if (x <= v[0]) return 0;
    if (x >= v[15]) return 15;
    int lo = 0, hi = 15;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < v[mid]) hi = mid;
        else lo = mid;
    }
    return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// One super-block of `nsub` 32-element sub-blocks. For IQ4_NL nsub == 1 and the single
// scale goes straight to fp16; for IQ4_XS the sub-block scales are themselves quantized.
void quantize_superblock(int nsub, const float* x, const float* qw_sb, half& dh, uint8_t* q4, uint16_t* scales_h,
                         uint8_t* scales_l) {
    const int n = 32 * nsub;
    uint8_t L[kQKK];
    float scales[8], weight[32];
    float sigma2 = 0;
    for (int j = 0; j < n; ++j) sigma2 += x[j] * x[j];
    sigma2 *= 2.f / static_cast<float>(n);
    std::memset(q4, 0, static_cast<size_t>(n / 2));
    dh = f32_to_fp16(0.f);

    float max_scale = 0, amax_scale = 0;
    for (int ib = 0; ib < nsub; ++ib) {
        const float* xb = x + 32 * ib;
        uint8_t* Lb = L + 32 * ib;
        if (qw_sb) {
            const float* qw = qw_sb + 32 * ib;
            for (int j = 0; j < 32; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
        } else {
            for (int j = 0; j < 32; ++j) weight[j] = xb[j] * xb[j];
        }
        float amax = 0, max = 0;
        for (int j = 0; j < 32; ++j) {
            if (std::fabs(xb[j]) > amax) {
                amax = std::fabs(xb[j]);
                max = xb[j];
            }
        }
        if (amax < 1e-15f) {
            scales[ib] = 0;
            continue;
        }
        const float v0 = kIq4nlValues[0];
        float d = -max / v0;
        float id = 1 / d;
        float sumqx = 0, sumq2 = 0;
        for (int j = 0; j < 32; ++j) {
            const int l = nearest_level(id * xb[j]);
            Lb[j] = static_cast<uint8_t>(l);
            const float q = kIq4nlValues[l];
            sumqx += weight[j] * q * xb[j];
            sumq2 += weight[j] * q * q;
        }
        d = sumqx / sumq2;
        float best = d * sumqx;
        for (int itry = -kTries; itry <= kTries; ++itry) {
            id = (static_cast<float>(itry) + v0) / max;
            sumqx = sumq2 = 0;
            for (int j = 0; j < 32; ++j) {
                const float q = kIq4nlValues[nearest_level(id * xb[j])];
                sumqx += weight[j] * q * xb[j];
                sumq2 += weight[j] * q * q;
            }
            if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                d = sumqx / sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        if (std::fabs(d) > amax_scale) {
            amax_scale = std::fabs(d);
            max_scale = d;
        }
    }

    if (nsub > 1) {
        *scales_h = 0;
        const float d = -max_scale / 32;
        dh = f32_to_fp16(d);
        const float id = d != 0 ? 1 / d : 0.f;
        for (int ib = 0; ib < nsub; ++ib) {
            int l = std::max(-32, std::min(31, search::nearest_int(id * scales[ib])));
            const float dl = d * static_cast<float>(l);
            const float idl = dl != 0 ? 1 / dl : 0.f;
            for (int j = 0; j < 32; ++j) L[32 * ib + j] = static_cast<uint8_t>(nearest_level(idl * x[32 * ib + j]));
            l += 32;
            if (ib % 2 == 0) scales_l[ib / 2] = static_cast<uint8_t>(l & 0xF);
            else scales_l[ib / 2] |= static_cast<uint8_t>((l & 0xF) << 4);
            *scales_h |= static_cast<uint16_t>((l >> 4) << (2 * ib));
        }
    } else {
        dh = f32_to_fp16(scales[0]);
        const float id = scales[0] != 0 ? 1 / scales[0] : 0;
        for (int j = 0; j < n; ++j) L[j] = static_cast<uint8_t>(nearest_level(id * x[j]));
    }
    for (int i = 0; i < n / 32; ++i)
        for (int j = 0; j < 16; ++j) q4[16 * i + j] = static_cast<uint8_t>(L[32 * i + j] | (L[32 * i + 16 + j] << 4));
}

}  // namespace

void quantize_row_iq4_nl(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_iq4_nl*>(vy);
    for (int64_t i = 0; i < n / kQK; ++i)
        quantize_superblock(1, x + i * kQK, imatrix ? imatrix + i * kQK : nullptr, y[i].d, y[i].qs, nullptr, nullptr);
}

void quantize_row_iq4_xs(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_iq4_xs*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i)
        quantize_superblock(8, x + i * kQKK, imatrix ? imatrix + i * kQKK : nullptr, y[i].d, y[i].qs, &y[i].scales_h,
                            y[i].scales_l);
}

}  // namespace pocket::kernels
