#pragma once
// Scalar binary16 / bfloat16 conversions, round-to-nearest-even like F16C's vcvtps2ph and
// ggml's software fallback, so scales computed here match ggml's bit for bit.
#include <bit>
#include <cstdint>

namespace pocket::kernels {

inline float fp16_to_f32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1F;
    uint32_t man = h & 0x3FF;
    uint32_t bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (man << 13);  // inf / nan
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else {  // subnormal half: normalise
        int e = 113;
        while (!(man & 0x400)) {
            man <<= 1;
            --e;
        }
        man &= 0x3FF;
        bits = sign | (static_cast<uint32_t>(e) << 23) | (man << 13);
    }
    return std::bit_cast<float>(bits);
}

inline uint16_t f32_to_fp16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
    const uint32_t ax = x & 0x7FFFFFFFu;
    if (ax > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00 | ((ax >> 13) & 0x3FF));  // nan stays nan
    if (ax >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00);  // rounds to inf
    if (ax < 0x38800000u) {  // result is subnormal or zero: round |f| * 2^24 to an integer
        if (ax < 0x33000000u) return sign;  // below half the smallest subnormal
        const uint32_t e = ax >> 23;
        const uint32_t m = (ax & 0x7FFFFF) | 0x800000;
        const uint32_t shift = 126 - e;  // m * 2^(e-150) * 2^24 = m >> (126 - e)
        uint32_t r = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1);
        const uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (r & 1))) ++r;
        return static_cast<uint16_t>(sign | r);
    }
    // normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even
    uint32_t r = ax - 0x38000000u;  // exponent 127 -> 15
    r += 0xFFF + ((r >> 13) & 1);
    return static_cast<uint16_t>(sign | (r >> 13));
}

inline float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 64);  // quiet nan
    return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

// Half of an E8M0 scale (2^(e-127) / 2 = 2^(e-128)), MXFP4's block scale: halved because its
// levels are stored doubled (kMxfp4Values). e = 0 and 1 give the subnormals 2^-128, 2^-127.
inline float e8m0_to_f32_half(uint8_t e) {
    const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
    return std::bit_cast<float>(bits);
}

}  // namespace pocket::kernels
