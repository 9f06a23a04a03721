#pragma once
// Block layouts exactly as ggml stores them in GGUF files. Every struct is checked against
// the type table so that a layout mistake fails to compile rather than misreading a file.
#include "pocket/ggml_type.hpp"

#include <cstdint>
#include <cstring>

namespace pocket::kernels {

using half = uint16_t;  // IEEE binary16 bits
using bf16 = uint16_t;  // bfloat16 bits

inline constexpr int kQK = 32;    // elements per legacy block
inline constexpr int kQKK = 256;  // elements per K-quant super-block

struct block_q4_0 {
    half d;
    uint8_t qs[kQK / 2];  // element j in low nibble of qs[j], element j+16 in high nibble
};
struct block_q4_1 {
    half d;
    half m;
    uint8_t qs[kQK / 2];
};
struct block_q5_0 {
    half d;
    uint8_t qh[4];  // bit j = 5th bit of element j
    uint8_t qs[kQK / 2];
};
struct block_q5_1 {
    half d;
    half m;
    uint8_t qh[4];
    uint8_t qs[kQK / 2];
};
struct block_q8_0 {
    half d;
    int8_t qs[kQK];
};
struct block_q8_1 {
    half d;
    half s;  // d * sum(qs), precomputed for the Q4_1/Q5_1 offset term
    int8_t qs[kQK];
};
struct block_q2_K {
    uint8_t scales[kQKK / 16];  // low nibble scale, high nibble min, per 16 elements
    uint8_t qs[kQKK / 4];
    half d;
    half dmin;
};
struct block_q3_K {
    uint8_t hmask[kQKK / 8];
    uint8_t qs[kQKK / 4];
    uint8_t scales[12];  // 16 six-bit scales
    half d;
};
struct block_q4_K {
    half d;
    half dmin;
    uint8_t scales[12];  // 8 six-bit scales and 8 six-bit mins
    uint8_t qs[kQKK / 2];
};
struct block_q5_K {
    half d;
    half dmin;
    uint8_t scales[12];
    uint8_t qh[kQKK / 8];
    uint8_t qs[kQKK / 2];
};
struct block_q6_K {
    uint8_t ql[kQKK / 2];
    uint8_t qh[kQKK / 4];
    int8_t scales[kQKK / 16];
    half d;
};
struct block_q8_K {
    float d;
    int8_t qs[kQKK];
    int16_t bsums[kQKK / 16];  // sum of each 16 qs, for the K-quants' min terms
};
struct block_iq4_nl {
    half d;
    uint8_t qs[kQK / 2];
};
struct block_iq4_xs {
    half d;
    uint16_t scales_h;
    uint8_t scales_l[kQKK / 64];
    uint8_t qs[kQKK / 2];
};

// The i-quants: 8 (IQ3: 4) weights at a time are one point of a grid (kernels/iq_grids.hpp),
// with signs apart (IQ2/IQ3) or a shift (IQ1). Scales are odd multiples of d.
struct block_iq2_xxs {
    half d;
    uint16_t qs[kQKK / 8];  // per 32: 4 grid bytes, then 4 x 7 sign bits and a 4-bit scale
};
struct block_iq2_xs {
    half d;
    uint16_t qs[kQKK / 8];  // 9-bit grid index, 7 sign bits
    uint8_t scales[kQKK / 32];  // two 4-bit scales per 32
};
struct block_iq2_s {
    half d;
    uint8_t qs[kQKK / 4];  // 32 grid bytes, then 32 sign bytes
    uint8_t qh[kQKK / 32];  // the grid indices' two high bits
    uint8_t scales[kQKK / 32];
};
struct block_iq3_xxs {
    half d;
    uint8_t qs[3 * kQKK / 8];  // 64 grid bytes, then per 32 a dword: 4 x 7 sign bits, 4-bit scale
};
struct block_iq3_s {
    half d;
    uint8_t qs[kQKK / 4];
    uint8_t qh[kQKK / 32];  // the grid indices' ninth bits
    uint8_t signs[kQKK / 8];
    uint8_t scales[kQKK / 64];
};
struct block_iq1_s {
    half d;
    uint8_t qs[kQKK / 8];  // grid index, low 8 bits
    uint16_t qh[kQKK / 32];  // per 32: 4 x 3 high index bits, a 3-bit scale, the shift's sign
};
struct block_iq1_m {
    uint8_t qs[kQKK / 8];
    uint8_t qh[kQKK / 16];  // per 16: two 3-bit high index bits, each with a shift sign bit
    uint8_t scales[kQKK / 32];  // 3-bit scales; the fp16 d in the top nibbles of the 4 uint16s
};
// Ternary: each weight is -d, 0 or +d.
struct block_tq1_0 {
    uint8_t qs[(kQKK - 4 * kQKK / 64) / 5];  // 5 trits per byte (base 3, scaled to 0..255)
    uint8_t qh[kQKK / 64];                   // 4 trits per byte
    half d;
};
struct block_tq2_0 {
    uint8_t qs[kQKK / 4];  // 2 bits per weight, value - 1
    half d;
};
// OCP microscaling FP4: 32 e2m1 values sharing one power-of-two (E8M0) scale.
struct block_mxfp4 {
    uint8_t e;
    uint8_t qs[kQK / 2];
};

// The 16 non-linear levels shared by IQ4_NL and IQ4_XS.
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};
// MXFP4's e2m1 levels, doubled to integers (the scale is halved to match).
inline constexpr int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

#define POCKET_CHECK_BLOCK(T, G)                                                     \
    static_assert(sizeof(T) == ggml_type_row(GgmlType::G).block_bytes, #T " size"); \
    static_assert(alignof(T) <= 4, #T " must not need more than 4-byte alignment")
POCKET_CHECK_BLOCK(half, F16);
POCKET_CHECK_BLOCK(bf16, BF16);
POCKET_CHECK_BLOCK(block_q4_0, Q4_0);
POCKET_CHECK_BLOCK(block_q4_1, Q4_1);
POCKET_CHECK_BLOCK(block_q5_0, Q5_0);
POCKET_CHECK_BLOCK(block_q5_1, Q5_1);
POCKET_CHECK_BLOCK(block_q8_0, Q8_0);
POCKET_CHECK_BLOCK(block_q8_1, Q8_1);
POCKET_CHECK_BLOCK(block_q2_K, Q2_K);
POCKET_CHECK_BLOCK(block_q3_K, Q3_K);
POCKET_CHECK_BLOCK(block_q4_K, Q4_K);
POCKET_CHECK_BLOCK(block_q5_K, Q5_K);
POCKET_CHECK_BLOCK(block_q6_K, Q6_K);
POCKET_CHECK_BLOCK(block_q8_K, Q8_K);
POCKET_CHECK_BLOCK(block_iq4_nl, IQ4_NL);
POCKET_CHECK_BLOCK(block_iq4_xs, IQ4_XS);
POCKET_CHECK_BLOCK(block_iq2_xxs, IQ2_XXS);
POCKET_CHECK_BLOCK(block_iq2_xs, IQ2_XS);
POCKET_CHECK_BLOCK(block_iq2_s, IQ2_S);
POCKET_CHECK_BLOCK(block_iq3_xxs, IQ3_XXS);
POCKET_CHECK_BLOCK(block_iq3_s, IQ3_S);
POCKET_CHECK_BLOCK(block_iq1_s, IQ1_S);
POCKET_CHECK_BLOCK(block_iq1_m, IQ1_M);
POCKET_CHECK_BLOCK(block_tq1_0, TQ1_0);
POCKET_CHECK_BLOCK(block_tq2_0, TQ2_0);
POCKET_CHECK_BLOCK(block_mxfp4, MXFP4);
#undef POCKET_CHECK_BLOCK
static_assert(ggml_type_row(GgmlType::Q4_0).block_size == kQK);
static_assert(ggml_type_row(GgmlType::Q4_K).block_size == kQKK);

// Six-bit scale and min j (0..7) of a Q4_K/Q5_K block, unpacked from the 12-byte field.
inline void k4_scale_min(int j, const uint8_t* s, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
        m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
    }
}

// Six-bit signed scale j (0..15) of a Q3_K block, already offset by -32.
inline int q3k_scale(int j, const uint8_t* s) {
    const int low = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
    const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

// Six-bit IQ4_XS scale of sub-block ib (0..7), offset by -32, from its fields: scales_l read as
// one little-endian dword (nibble ib at bits 4ib) and scales_h (bits 2ib, 2ib + 1).
inline int iq4xs_scale_of(uint32_t scales_l, uint16_t scales_h, int ib) {
    const int low = static_cast<int>(scales_l >> (4 * ib)) & 0xF;
    const int high = (scales_h >> (2 * ib)) & 3;
    return (low | (high << 4)) - 32;
}
inline int iq4xs_scale(int ib, const block_iq4_xs& b) {
    uint32_t low;
    std::memcpy(&low, b.scales_l, 4);
    return iq4xs_scale_of(low, b.scales_h, ib);
}

// IQ1_M's fp16 d, spread over the top nibbles of its four 16-bit scale words.
inline uint16_t iq1m_d_bits(const block_iq1_m& b) {
    uint16_t sc[4];
    std::memcpy(sc, b.scales, 8);
    return static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
}

// Trit k (0..4) of a TQ1_0 byte, 0..2: the byte is a base-3 fraction scaled to 0..255, so
// multiplying by 3^k (mod 256) brings trit k to the top and * 3 >> 8 reads it.
inline int tq1_trit(uint8_t byte, int k) {
    static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
    const auto q = static_cast<uint8_t>(byte * kPow3[k]);
    return (q * 3) >> 8;
}

}  // namespace pocket::kernels
