#pragma once
// Row conversions between f32 and the storage types the CPU ops read and write (KV cache,
// weights for get_rows). f16 and q8_0 are implemented here so that the cache works whatever
// the kernels library provides; other weight types go through kernels::dequantize_row.
#include "pocket/ggml_type.hpp"

#include <cstdint>
#include <cstring>

namespace pocket::cpu {

// IEEE half <-> float, round to nearest even (as ggml's scalar and F16C conversions).
inline float fp16_to_fp32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);          // inf / nan
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);  // normal
    } else if (man == 0) {
        bits = sign;                                       // zero
    } else {
        // Subnormal half: exact in float as man * 2^-24.
        float f = static_cast<float>(man) * (1.0f / 16777216.0f);
        std::memcpy(&bits, &f, 4);
        bits |= sign;
    }
    float out;
    std::memcpy(&out, &bits, 4);
    return out;
}

inline uint16_t fp32_to_fp16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {
        // Subnormal or zero half: round abs * 2^24 to an integer, ties to even.
        float a;
        std::memcpy(&a, &abs, 4);
        const float scaled = a * 16777216.0f;  // exact: a < 2^-14, scaled < 2^10
        uint32_t m = static_cast<uint32_t>(scaled);
        const float rem = scaled - static_cast<float>(m);
        if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
        return static_cast<uint16_t>(sign | m);
    }
    // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
    uint32_t h = ((abs >> 13) - (112u << 10));
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
}

// One row of n elements of `type` -> f32. Throws pocket::Error for a type with no conversion.
void row_to_f32(GgmlType type, const void* src, float* dst, int64_t n);
// f32 -> one row of `type` (F32, F16, BF16, Q8_0; others through the kernels' quantize_row).
void row_from_f32(GgmlType type, const float* src, void* dst, int64_t n);
// Can row_to_f32 / row_from_f32 handle this type?
bool can_read_as_f32(GgmlType type);
bool can_write_from_f32(GgmlType type);

}  // namespace pocket::cpu
