// Reference quantization of the K-quants (Q2_K … Q6_K). Without an imatrix these follow
// ggml's *_ref paths (what llama-quantize runs when it has none); with one, ggml's
// importance-weighted paths. Both are reproduced expression for expression.
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/quant_search.hpp"
#include "kernels/row_functions.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pocket::kernels {

using search::nearest_int;

namespace {

// 2-bit levels of 256 elements: four 32-element groups share each byte.
void pack_2bit(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < kQKK; j += 128)
        for (int l = 0; l < 32; ++l)
            qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

void pack_k4_scales(uint8_t* scales, int j, uint8_t ls, uint8_t lm) {
    if (j < 4) {
        scales[j] = ls;
        scales[j + 4] = lm;
    } else {
        scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
        scales[j - 4] |= static_cast<uint8_t>((ls >> 4) << 6);
        scales[j] |= static_cast<uint8_t>((lm >> 4) << 6);
    }
}

void pack_q3_scale(uint8_t* scales, int j, int l) {
    if (j < 8)
        scales[j] = static_cast<uint8_t>(l & 0xF);
    else
        scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
    scales[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
}

// Final Q4_K/Q5_K levels from the stored (rounded) scales and mins.
void requantize_k4(const float* x, const uint8_t* scales, half hd, half hdmin, int nmax, uint8_t* L) {
    for (int j = 0; j < kQKK / 32; ++j) {
        uint8_t sc, m;
        k4_scale_min(j, scales, sc, m);
        const float d = fp16_to_f32(hd) * sc;
        if (d == 0) continue;
        const float dm = fp16_to_f32(hdmin) * m;
        for (int ii = 0; ii < 32; ++ii)
            L[32 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(nmax, nearest_int((x[32 * j + ii] + dm) / d))));
    }
}

// Final Q3_K levels, then the high bit into hmask and two bits into qs.
void finish_q3(const float* x, block_q3_K& y, int8_t* L) {
    for (int j = 0; j < kQKK / 16; ++j) {
        const float d = fp16_to_f32(y.d) * static_cast<float>(q3k_scale(j, y.scales));
        if (d == 0) continue;
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = static_cast<int8_t>(std::max(-4, std::min(3, nearest_int(x[16 * j + ii] / d))) + 4);
    }
    std::memset(y.hmask, 0, sizeof y.hmask);
    // high bit of element j goes to hmask[j % 32], bit j / 32
    for (int j = 0; j < kQKK; ++j) {
        if (L[j] > 3) {
            y.hmask[j % 32] |= static_cast<uint8_t>(1 << (j / 32));
            L[j] = static_cast<int8_t>(L[j] - 4);
        }
    }
    pack_2bit(reinterpret_cast<const uint8_t*>(L), y.qs);
}

void pack_q5k(const uint8_t* L, block_q5_K& y) {
    std::memset(y.qh, 0, sizeof y.qh);
    uint8_t* ql = y.qs;
    uint8_t m1 = 1, m2 = 2;
    for (int n = 0; n < kQKK; n += 64, ql += 32) {
        for (int j = 0; j < 32; ++j) {
            int l1 = L[n + j], l2 = L[n + j + 32];
            if (l1 > 15) {
                l1 -= 16;
                y.qh[j] |= m1;
            }
            if (l2 > 15) {
                l2 -= 16;
                y.qh[j] |= m2;
            }
            ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
        }
        m1 = static_cast<uint8_t>(m1 << 2);
        m2 = static_cast<uint8_t>(m2 << 2);
    }
}

void pack_q6k(const int8_t* L, block_q6_K& y) {
    uint8_t* ql = y.ql;
    uint8_t* qh = y.qh;
    for (int j = 0; j < kQKK; j += 128, ql += 64, qh += 32) {
        for (int l = 0; l < 32; ++l) {
            const int q1 = L[j + l] & 0xF, q2 = L[j + l + 32] & 0xF;
            const int q3 = L[j + l + 64] & 0xF, q4 = L[j + l + 96] & 0xF;
            ql[l] = static_cast<uint8_t>(q1 | (q3 << 4));
            ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
            qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) |
                                         ((L[j + l + 96] >> 4) << 6));
        }
    }
}

float sum_squares(const float* x, int n) {
    float s = 0;
    for (int j = 0; j < n; ++j) s += x[j] * x[j];
    return s;
}

// ---- Q2_K ----
void q2k_block_ref(const float* x, block_q2_K& y) {
    uint8_t L[kQKK], Laux[16];
    float weights[16], mins[16], scales[16];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 16; ++j) {
        for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
        scales[j] = search::affine_levels(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
        max_scale = std::max(max_scale, scales[j]);
        max_min = std::max(max_min, mins[j]);
    }
    if (max_scale > 0) {
        const float iscale = 15.f / max_scale;
        for (int j = 0; j < 16; ++j) y.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
        y.d = f32_to_fp16(max_scale / 15.f);
    } else {
        std::memset(y.scales, 0, sizeof y.scales);
        y.d = f32_to_fp16(0.f);
    }
    if (max_min > 0) {
        const float iscale = 15.f / max_min;
        for (int j = 0; j < 16; ++j) y.scales[j] |= static_cast<uint8_t>(nearest_int(iscale * mins[j]) << 4);
        y.dmin = f32_to_fp16(max_min / 15.f);
    } else {
        y.dmin = f32_to_fp16(0.f);
    }
    for (int j = 0; j < 16; ++j) {
        const float d = fp16_to_f32(y.d) * static_cast<float>(y.scales[j] & 0xF);
        if (d == 0) continue;
        const float dm = fp16_to_f32(y.dmin) * static_cast<float>(y.scales[j] >> 4);
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, nearest_int((x[16 * j + ii] + dm) / d))));
    }
    pack_2bit(L, y.qs);
}

void q2k_block_imatrix(const float* x, block_q2_K& y, const float* qw_block) {
    uint8_t L[kQKK], Laux[16], Ls[16], Lm[16];
    float mins[16], scales[16], sw[16] = {}, weight[16];
    const float sigma2 = sum_squares(x, kQKK) / kQKK;
    for (int j = 0; j < 16; ++j) {
        const float* qw = qw_block + 16 * j;
        for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
        for (int l = 0; l < 16; ++l) sw[j] += weight[l];
        scales[j] = search::affine_levels_x3(16, 3, x + 16 * j, weight, L + 16 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
    }
    float dm = search::positive_levels(16, 15, scales, Ls, sw);
    float mm = search::positive_levels(16, 15, mins, Lm, sw);
    y.d = f32_to_fp16(dm);
    y.dmin = f32_to_fp16(mm);
    dm = fp16_to_f32(y.d);
    mm = fp16_to_f32(y.dmin);
    for (int j = 0; j < 16; ++j) y.scales[j] = static_cast<uint8_t>(Ls[j] | (Lm[j] << 4));
    for (int j = 0; j < 16; ++j) {
        const float d = dm * static_cast<float>(y.scales[j] & 0xF);
        if (d == 0) continue;
        const float m = mm * static_cast<float>(y.scales[j] >> 4);
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = static_cast<uint8_t>(std::max(0, std::min(3, nearest_int((x[16 * j + ii] + m) / d))));
    }
    pack_2bit(L, y.qs);
}

// ---- Q3_K ----
void q3k_block_ref(const float* x, block_q3_K& y) {
    int8_t L[kQKK];
    float scales[16];
    float max_scale = 0, amax = 0;
    for (int j = 0; j < 16; ++j) {
        scales[j] = search::symmetric_levels_q3(16, 4, x + 16 * j, L + 16 * j, true);
        if (std::fabs(scales[j]) > amax) {
            amax = std::fabs(scales[j]);
            max_scale = scales[j];
        }
    }
    std::memset(y.scales, 0, sizeof y.scales);
    if (max_scale != 0) {
        const float iscale = -32.f / max_scale;
        for (int j = 0; j < 16; ++j) {
            // ggml stores the rounded value in an int8_t before clamping
            const int l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
            pack_q3_scale(y.scales, j, std::max(-32, std::min(31, l)) + 32);
        }
        y.d = f32_to_fp16(1 / iscale);
    } else {
        y.d = f32_to_fp16(0.f);
    }
    finish_q3(x, y, L);
}

void q3k_block_imatrix(const float* x, block_q3_K& y, const float* qw_block) {
    int8_t L[kQKK], Ls[16];
    float scales[16], weight[16], sw[16];
    const float sigma2 = 2 * sum_squares(x, kQKK) / kQKK;
    for (int j = 0; j < 16; ++j) {
        const float* qw = qw_block + 16 * j;
        for (int l = 0; l < 16; ++l) weight[l] = qw[l] * std::sqrt(sigma2 + x[16 * j + l] * x[16 * j + l]);
        float sumw = 0;
        for (int l = 0; l < 16; ++l) sumw += weight[l];
        sw[j] = sumw;
        scales[j] = search::symmetric_levels(16, 4, x + 16 * j, L + 16 * j, 1, weight);
    }
    std::memset(y.scales, 0, sizeof y.scales);
    const float d_block = search::symmetric_levels(16, 32, scales, Ls, 1, sw);
    for (int j = 0; j < 16; ++j) pack_q3_scale(y.scales, j, Ls[j]);
    y.d = f32_to_fp16(d_block);
    finish_q3(x, y, L);
}

// ---- Q4_K / Q5_K ----
template <int kNmax>
void k45_scales_ref(const float* x, uint8_t* L, float* scales, float* mins, uint8_t* packed, half& hd, half& hdmin,
                    float rmin, float rdelta, int nstep) {
    uint8_t Laux[32];
    float weights[32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        const float av_x = std::sqrt(sum_squares(x + 32 * j, 32) / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        scales[j] = search::affine_levels(32, kNmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin, rdelta, nstep, false);
        max_scale = std::max(max_scale, scales[j]);
        max_min = std::max(max_min, mins[j]);
    }
    const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
    const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
    for (int j = 0; j < 8; ++j) {
        // ggml narrows to uint8_t before clamping to 63
        const auto ls = static_cast<uint8_t>(std::min<int>(63, static_cast<uint8_t>(nearest_int(inv_scale * scales[j]))));
        const auto lm = static_cast<uint8_t>(std::min<int>(63, static_cast<uint8_t>(nearest_int(inv_min * mins[j]))));
        pack_k4_scales(packed, j, ls, lm);
    }
    hd = f32_to_fp16(max_scale / 63.f);
    hdmin = f32_to_fp16(max_min / 63.f);
}

template <int kNmax>
void k45_scales_imatrix(const float* x, const float* qw_block, uint8_t* L, uint8_t* packed, half& hd, half& hdmin) {
    uint8_t Laux[32], Ls[8], Lm[8];
    float weights[32], sw[8], mins[8], scales[8];
    const float sigma2 = 2 * sum_squares(x, kQKK) / kQKK;
    const float av_x = std::sqrt(sigma2);
    for (int j = 0; j < 8; ++j) {
        if (qw_block) {
            const float* qw = qw_block + 32 * j;
            for (int l = 0; l < 32; ++l) weights[l] = qw[l] * std::sqrt(sigma2 + x[32 * j + l] * x[32 * j + l]);
        } else {
            for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
        }
        float sumw = 0;
        for (int l = 0; l < 32; ++l) sumw += weights[l];
        sw[j] = sumw;
        scales[j] = search::affine_levels_x3(32, kNmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
    }
    const float d_block = search::positive_levels(8, 63, scales, Ls, sw);
    const float m_block = search::positive_levels(8, 63, mins, Lm, sw);
    for (int j = 0; j < 8; ++j) pack_k4_scales(packed, j, std::min<uint8_t>(63, Ls[j]), std::min<uint8_t>(63, Lm[j]));
    hd = f32_to_fp16(d_block);
    hdmin = f32_to_fp16(m_block);
}

// ---- Q6_K ----
void q6k_block(const float* x, block_q6_K& y, const float* qw_block) {
    int8_t L[kQKK];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    for (int ib = 0; ib < 16; ++ib) {
        const float* qw = qw_block ? qw_block + 16 * ib : nullptr;
        scales[ib] = search::symmetric_levels(16, 32, x + 16 * ib, L + 16 * ib, 1, qw);
        if (std::fabs(scales[ib]) > max_abs_scale) {
            max_abs_scale = std::fabs(scales[ib]);
            max_scale = scales[ib];
        }
    }
    if (max_abs_scale < 1e-15f) {
        std::memset(&y, 0, sizeof y);
        return;
    }
    const float iscale = -128.f / max_scale;
    y.d = f32_to_fp16(1 / iscale);
    for (int ib = 0; ib < 16; ++ib) y.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
    for (int j = 0; j < 16; ++j) {
        const float d = fp16_to_f32(y.d) * static_cast<float>(y.scales[j]);
        if (d == 0) continue;
        for (int ii = 0; ii < 16; ++ii)
            L[16 * j + ii] = static_cast<int8_t>(std::max(-32, std::min(31, nearest_int(x[16 * j + ii] / d))) + 32);
    }
    pack_q6k(L, y);
}

}  // namespace

void quantize_row_q2_K(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q2_K*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        if (imatrix)
            q2k_block_imatrix(x, y[i], imatrix + i * kQKK);
        else
            q2k_block_ref(x, y[i]);
    }
}

void quantize_row_q3_K(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q3_K*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        if (imatrix)
            q3k_block_imatrix(x, y[i], imatrix + i * kQKK);
        else
            q3k_block_ref(x, y[i]);
    }
}

void quantize_row_q4_K(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q4_K*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        uint8_t L[kQKK];
        float scales[8], mins[8];
        std::memset(y[i].scales, 0, sizeof y[i].scales);
        if (imatrix)
            k45_scales_imatrix<15>(x, imatrix + i * kQKK, L, y[i].scales, y[i].d, y[i].dmin);
        else
            k45_scales_ref<15>(x, L, scales, mins, y[i].scales, y[i].d, y[i].dmin, -1.f, 0.1f, 20);
        requantize_k4(x, y[i].scales, y[i].d, y[i].dmin, 15, L);
        for (int j = 0; j < kQKK; j += 64)
            for (int l = 0; l < 32; ++l) y[i].qs[j / 2 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    }
}

void quantize_row_q5_K(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q5_K*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        uint8_t L[kQKK];
        float scales[8], mins[8];
        std::memset(y[i].scales, 0, sizeof y[i].scales);
        if (imatrix)
            k45_scales_imatrix<31>(x, imatrix + i * kQKK, L, y[i].scales, y[i].d, y[i].dmin);
        else
            k45_scales_ref<31>(x, L, scales, mins, y[i].scales, y[i].d, y[i].dmin, -0.5f, 0.1f, 15);
        requantize_k4(x, y[i].scales, y[i].d, y[i].dmin, 31, L);
        pack_q5k(L, y[i]);
    }
}

void quantize_row_q6_K(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q6_K*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) q6k_block(x, y[i], imatrix ? imatrix + i * kQKK : nullptr);
}

}  // namespace pocket::kernels
