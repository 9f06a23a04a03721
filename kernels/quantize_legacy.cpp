// Reference quantization of the 32-element block types (Q4_0 … Q8_1), following ggml's
// deterministic algorithms so the bytes equal llama-quantize's: the plain *_ref path
// without an imatrix, ggml's importance-weighted scale search with one (Q4_0 … Q5_1).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/quant_search.hpp"
#include "kernels/row_functions.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace pocket::kernels {
namespace {

// The element of largest magnitude, sign kept (first one wins ties).
inline float signed_absmax(const float* x, int n) {
    float amax = 0, max = 0;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    return max;
}

inline void min_max(const float* x, int n, float& min, float& max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
}

// Importance weights of one block: imatrix scaled by the element's size against the row's
// mean square (sigma2 is over the whole row, as ggml computes it).
inline void block_weights(const float* xb, const float* qw, float sigma2, float* weight) {
    for (int j = 0; j < kQK; ++j) weight[j] = qw[j] * std::sqrt(sigma2 + xb[j] * xb[j]);
}

inline float row_sigma2(const float* x, int64_t n) {
    float sum_x2 = 0;
    for (int64_t j = 0; j < n; ++j) sum_x2 += x[j] * x[j];
    return sum_x2 / static_cast<float>(n);
}

inline void pack_nibbles(const uint8_t* L, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((L[j] & 0xF) | ((L[j + 16] & 0xF) << 4));
}

inline void pack_bit4(const uint8_t* L, uint8_t* qh_bytes) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        qh |= static_cast<uint32_t>((L[j] >> 4) & 1) << j;
        qh |= static_cast<uint32_t>((L[j + 16] >> 4) & 1) << (j + 16);
    }
    std::memcpy(qh_bytes, &qh, 4);
}

// Symmetric types (Q4_0: nmax 8, Q5_0: nmax 16) with an imatrix.
template <class Block, int kNmax>
void symmetric_weighted(const float* x, Block* y, int64_t n, const float* imatrix) {
    const float sigma2 = row_sigma2(x, n);
    float weight[kQK];
    int8_t L[kQK];
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        const float* xb = x + kQK * ib;
        block_weights(xb, imatrix + kQK * ib, sigma2, weight);
        y[ib].d = f32_to_fp16(search::symmetric_levels(kQK, kNmax, xb, L, 1, weight));
        const auto* Lu = reinterpret_cast<const uint8_t*>(L);
        pack_nibbles(Lu, y[ib].qs);
        if constexpr (kNmax == 16) pack_bit4(Lu, y[ib].qh);
    }
}

// Affine types (Q4_1: nmax 15, Q5_1: nmax 31) with an imatrix.
template <class Block, int kNmax>
void affine_weighted(const float* x, Block* y, int64_t n, const float* imatrix) {
    const float sigma2 = row_sigma2(x, n);
    float weight[kQK];
    uint8_t L[kQK], Laux[kQK];
    for (int64_t ib = 0; ib < n / kQK; ++ib) {
        const float* xb = x + kQK * ib;
        block_weights(xb, imatrix + kQK * ib, sigma2, weight);
        float min;
        const float d = search::affine_levels_x3(kQK, kNmax, xb, weight, L, &min, Laux, -0.9f, 0.05f, 36, false);
        y[ib].d = f32_to_fp16(d);
        y[ib].m = f32_to_fp16(-min);
        pack_nibbles(L, y[ib].qs);
        if constexpr (kNmax == 31) pack_bit4(L, y[ib].qh);
    }
}

}  // namespace

void quantize_row_q4_0(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q4_0*>(vy);
    if (imatrix) return symmetric_weighted<block_q4_0, 8>(x, y, n, imatrix);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        const float d = signed_absmax(x, kQK) / -8;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        for (int j = 0; j < kQK / 2; ++j) {
            // truncation after +8.5 rounds half up, as ggml does
            const int lo = std::min(15, static_cast<int>(x[j] * id + 8.5f));
            const int hi = std::min(15, static_cast<int>(x[j + kQK / 2] * id + 8.5f));
            y[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void quantize_row_q4_1(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q4_1*>(vy);
    if (imatrix) return affine_weighted<block_q4_1, 15>(x, y, n, imatrix);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float min, max;
        min_max(x, kQK, min, max);
        const float d = (max - min) / 15;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        y[i].m = f32_to_fp16(min);
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = std::min(15, static_cast<int>((x[j] - min) * id + 0.5f));
            const int hi = std::min(15, static_cast<int>((x[j + kQK / 2] - min) * id + 0.5f));
            y[i].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void quantize_row_q5_0(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q5_0*>(vy);
    if (imatrix) return symmetric_weighted<block_q5_0, 16>(x, y, n, imatrix);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        const float d = signed_absmax(x, kQK) / -16;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = std::min(31, static_cast<int>(x[j] * id + 16.5f));
            const int hi = std::min(31, static_cast<int>(x[j + kQK / 2] * id + 16.5f));
            y[i].qs[j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
            qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
            qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, 4);
    }
}

void quantize_row_q5_1(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_q5_1*>(vy);
    if (imatrix) return affine_weighted<block_q5_1, 31>(x, y, n, imatrix);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float min, max;
        min_max(x, kQK, min, max);
        const float d = (max - min) / 31;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        y[i].m = f32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = static_cast<int>((x[j] - min) * id + 0.5f) & 0xFF;
            const int hi = static_cast<int>((x[j + kQK / 2] - min) * id + 0.5f) & 0xFF;
            y[i].qs[j] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
            qh |= static_cast<uint32_t>((lo >> 4) & 1) << j;
            qh |= static_cast<uint32_t>((hi >> 4) & 1) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, 4);
    }
}

void quantize_row_q8_0(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q8_0*>(vy);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    }
}

void quantize_row_q8_1(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q8_1*>(vy);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        int sum = 0;
        for (int j = 0; j < kQK; ++j) {
            y[i].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
            sum += y[i].qs[j];
        }
        y[i].s = f32_to_fp16(static_cast<float>(sum) * d);
    }
}

void quantize_row_q8_K(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q8_K*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        const float max = signed_absmax(x, kQKK);
        if (max == 0) {
            std::memset(&y[i], 0, sizeof(block_q8_K));
            continue;
        }
        // -127 (not -128) keeps every level representable with the sign flipped
        const float iscale = -127.f / max;
        for (int j = 0; j < kQKK; ++j) y[i].qs[j] = static_cast<int8_t>(std::min(127, search::nearest_int(iscale * x[j])));
        for (int j = 0; j < kQKK / 16; ++j) {
            int sum = 0;
            for (int k = 0; k < 16; ++k) sum += y[i].qs[j * 16 + k];
            y[i].bsums[j] = static_cast<int16_t>(sum);
        }
        y[i].d = 1 / iscale;
    }
}

void quantize_row_f16(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<half*>(vy);
    for (int64_t i = 0; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

void quantize_row_bf16(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<bf16*>(vy);
    for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
}

void quantize_row_f32(const float* x, void* vy, int64_t n, const float*) {
    std::memcpy(vy, x, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace pocket::kernels
