// Row conversions (see convert.hpp).
#include "backend/cpu/convert.hpp"

#include "pocket/error.hpp"

#ifndef POCKET_KERNELS_PLACEHOLDER
#include "kernels/kernels.hpp"
#endif

#include <algorithm>
#include <cmath>

namespace pocket::cpu {

namespace {

constexpr int kQ8Block = 32;
struct BlockQ8_0 {
    uint16_t d;  // f16 scale
    int8_t qs[kQ8Block];
};
static_assert(sizeof(BlockQ8_0) == ggml_type_row(GgmlType::Q8_0).block_bytes);

void q8_0_to_f32(const void* src, float* dst, int64_t n) {
    const auto* blocks = static_cast<const BlockQ8_0*>(src);
    for (int64_t b = 0; b < n / kQ8Block; ++b) {
        const float d = fp16_to_fp32(blocks[b].d);
        for (int j = 0; j < kQ8Block; ++j) dst[b * kQ8Block + j] = static_cast<float>(blocks[b].qs[j]) * d;
    }
}

// ggml's reference q8_0 quantization: scale = amax / 127, values rounded half away from zero.
void f32_to_q8_0(const float* src, void* dst, int64_t n) {
    auto* blocks = static_cast<BlockQ8_0*>(dst);
    for (int64_t b = 0; b < n / kQ8Block; ++b) {
        const float* x = src + b * kQ8Block;
        float amax = 0.0f;
        for (int j = 0; j < kQ8Block; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        blocks[b].d = fp32_to_fp16(d);
        for (int j = 0; j < kQ8Block; ++j) blocks[b].qs[j] = static_cast<int8_t>(std::round(x[j] * id));
    }
}

float bf16_to_f32(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint16_t f32_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 64);  // quiet nan
    return static_cast<uint16_t>((x + (0x7fffu + ((x >> 16) & 1u))) >> 16);            // nearest even
}

}  // namespace

bool can_read_as_f32(GgmlType type) {
    switch (type) {
        case GgmlType::F32: case GgmlType::F16: case GgmlType::BF16: case GgmlType::Q8_0: return true;
        default: break;
    }
#ifndef POCKET_KERNELS_PLACEHOLDER
    const kernels::TypeKernels* k = kernels::type_kernels(type);
    return k && k->dequantize_row;
#else
    return false;
#endif
}

bool can_write_from_f32(GgmlType type) {
    return type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 || type == GgmlType::Q8_0;
}

void row_to_f32(GgmlType type, const void* src, float* dst, int64_t n) {
    switch (type) {
        case GgmlType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
        case GgmlType::F16: {
            const auto* h = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(h[i]);
            return;
        }
        case GgmlType::BF16: {
            const auto* h = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
            return;
        }
        case GgmlType::Q8_0: q8_0_to_f32(src, dst, n); return;
        default: break;
    }
#ifndef POCKET_KERNELS_PLACEHOLDER
    if (const kernels::TypeKernels* k = kernels::type_kernels(type); k && k->dequantize_row) {
        k->dequantize_row(src, dst, n);
        return;
    }
#endif
    throw Error("cpu backend: no conversion from {} to f32", ggml_type_info(type).name);
}

void row_from_f32(GgmlType type, const float* src, void* dst, int64_t n) {
    switch (type) {
        case GgmlType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
        case GgmlType::F16: {
            auto* h = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) h[i] = fp32_to_fp16(src[i]);
            return;
        }
        case GgmlType::BF16: {
            auto* h = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) h[i] = f32_to_bf16(src[i]);
            return;
        }
        case GgmlType::Q8_0: f32_to_q8_0(src, dst, n); return;
        default: break;
    }
    throw Error("cpu backend: no conversion from f32 to {}", ggml_type_info(type).name);
}

}  // namespace pocket::cpu
