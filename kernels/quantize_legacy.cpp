// Reference quantization of the 32-element block types (Q4_0 … Q8_1), following ggml's
// deterministic *_ref algorithms so the bytes equal llama-quantize's without an imatrix.
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

}  // namespace

void quantize_row_q4_0(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q4_0*>(vy);
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

void quantize_row_q4_1(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q4_1*>(vy);
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

void quantize_row_q5_0(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q5_0*>(vy);
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

void quantize_row_q5_1(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q5_1*>(vy);
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
