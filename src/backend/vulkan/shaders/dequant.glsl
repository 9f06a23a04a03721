// Dequantization of one chunk of 32 consecutive elements of a src0 row, for the weight type
// named by the TYPE_* define: dequant_chunk(row, c, w) fills w with elements 32c..32c+31 of
// the row starting at byte `row` (ggml's block layouts, read through 16-bit words). K-quant
// super-blocks hold 8 chunks. Float types: the caller bounds the last, partial chunk.
#if defined(TYPE_F32)
#define QK 1u
#define QBYTES 4u
void dequant_chunk(uint row, uint c, out float w[32]) {
    [[unroll]] for (uint j = 0u; j < 32u; ++j) w[j] = uintBitsToFloat(s0_u32(row + 4u * (32u * c + j)));
}
#elif defined(TYPE_F16)
#define QK 1u
#define QBYTES 2u
void dequant_chunk(uint row, uint c, out float w[32]) {
    [[unroll]] for (uint j = 0u; j < 32u; ++j) w[j] = s0_half(row + 2u * (32u * c + j));
}
#elif defined(TYPE_BF16)
#define QK 1u
#define QBYTES 2u
void dequant_chunk(uint row, uint c, out float w[32]) {
    [[unroll]] for (uint j = 0u; j < 32u; ++j) w[j] = uintBitsToFloat(s0_u16(row + 2u * (32u * c + j)) << 16);
}
#elif defined(TYPE_Q4_0)
#define QK 32u
#define QBYTES 18u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + c * QBYTES;
    const float d = s0_half(b);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = s0_u8(b + 2u + j);
        w[j] = float(int(q & 15u) - 8) * d;
        w[j + 16u] = float(int(q >> 4) - 8) * d;
    }
}
#elif defined(TYPE_Q4_1)
#define QK 32u
#define QBYTES 20u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + c * QBYTES;
    const float d = s0_half(b), m = s0_half(b + 2u);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = s0_u8(b + 4u + j);
        w[j] = float(q & 15u) * d + m;
        w[j + 16u] = float(q >> 4) * d + m;
    }
}
#elif defined(TYPE_Q5_0)
#define QK 32u
#define QBYTES 22u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + c * QBYTES;
    const float d = s0_half(b);
    const uint qh = s0_u32(b + 2u);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = s0_u8(b + 6u + j);
        w[j] = float(int((q & 15u) | (((qh >> j) & 1u) << 4)) - 16) * d;
        w[j + 16u] = float(int((q >> 4) | (((qh >> (j + 16u)) & 1u) << 4)) - 16) * d;
    }
}
#elif defined(TYPE_Q5_1)
#define QK 32u
#define QBYTES 24u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + c * QBYTES;
    const float d = s0_half(b), m = s0_half(b + 2u);
    const uint qh = s0_u32(b + 4u);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = s0_u8(b + 8u + j);
        w[j] = float((q & 15u) | (((qh >> j) & 1u) << 4)) * d + m;
        w[j + 16u] = float((q >> 4) | (((qh >> (j + 16u)) & 1u) << 4)) * d + m;
    }
}
#elif defined(TYPE_Q8_0)
#define QK 32u
#define QBYTES 34u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + c * QBYTES;
    const float d = s0_half(b);
    [[unroll]] for (uint j = 0u; j < 32u; ++j) w[j] = float(s0_i8(b + 2u + j)) * d;
}
#elif defined(TYPE_Q2_K)
#define QK 256u
#define QBYTES 84u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u;   // scales[16] qs[64] d dmin
    const uint h = sub >> 2, j = sub & 3u;
    const float d = s0_half(b + 80u), dmin = s0_half(b + 82u);
    [[unroll]] for (uint half_ = 0u; half_ < 2u; ++half_) {
        const uint sc = s0_u8(b + h * 8u + j * 2u + half_);
        const float dl = d * float(sc & 15u), ml = dmin * float(sc >> 4);
        [[unroll]] for (uint l = 0u; l < 16u; ++l) {
            const uint q = s0_u8(b + 16u + h * 32u + half_ * 16u + l);
            w[half_ * 16u + l] = dl * float((q >> (2u * j)) & 3u) - ml;
        }
    }
}
#elif defined(TYPE_Q3_K)
#define QK 256u
#define QBYTES 110u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u;   // hmask[32] qs[64] scales[12] d
    const uint h = sub >> 2, j = sub & 3u;
    const float d = s0_half(b + 108u);
    [[unroll]] for (uint half_ = 0u; half_ < 2u; ++half_) {
        const uint is = h * 8u + j * 2u + half_, g = is >> 2, k = is & 3u;
        const uint lo2 = g == 0u || g == 2u ? s0_u8(b + 96u + k) : s0_u8(b + 96u + 4u + k);
        const uint low2 = g < 2u ? (lo2 & 15u) : (lo2 >> 4);
        const uint high = (s0_u8(b + 96u + 8u + k) >> (2u * g)) & 3u;
        const float dl = d * float(int(low2 | (high << 4)) - 32);
        [[unroll]] for (uint l = 0u; l < 16u; ++l) {
            const uint e = half_ * 16u + l;
            const uint q = (s0_u8(b + 32u + h * 32u + e) >> (2u * j)) & 3u;
            const bool hi = (s0_u8(b + e) & (1u << (h * 4u + j))) != 0u;
            w[e] = dl * float(int(q) - (hi ? 0 : 4));
        }
    }
}
#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
#define QK 256u
#if defined(TYPE_Q4_K)
#define QBYTES 144u
#define QS_AT 16u
#else
#define QBYTES 176u
#define QS_AT 48u
#endif
// The 6-bit scale and min of sub-block j from the 12 scale bytes at s (ggml's get_scale_min_k4).
void scale_min_k4(uint s, uint j, out float sc, out float m) {
    if (j < 4u) {
        sc = float(s0_u8(s + j) & 63u);
        m = float(s0_u8(s + j + 4u) & 63u);
    } else {
        sc = float((s0_u8(s + j + 4u) & 15u) | ((s0_u8(s + j - 4u) >> 6) << 4));
        m = float((s0_u8(s + j + 4u) >> 4) | ((s0_u8(s + j) >> 6) << 4));
    }
}
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u;   // d dmin scales[12] (qh[32]) qs[128]
    const float d = s0_half(b), dmin = s0_half(b + 2u);
    float sc, m;
    scale_min_k4(b + 4u, sub, sc, m);
    const float dl = d * sc, ml = dmin * m;
    const uint shift = (sub & 1u) * 4u;
    [[unroll]] for (uint l = 0u; l < 32u; ++l) {
        uint q = (s0_u8(b + QS_AT + (sub >> 1) * 32u + l) >> shift) & 15u;
#if defined(TYPE_Q5_K)
        q |= ((s0_u8(b + 16u + l) >> sub) & 1u) << 4;
#endif
        w[l] = dl * float(q) - ml;
    }
}
#elif defined(TYPE_Q6_K)
#define QK 256u
#define QBYTES 210u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u;   // ql[128] qh[64] scales[16] d
    const uint h = sub >> 2, k = sub & 3u;
    const float d = s0_half(b + 208u);
    [[unroll]] for (uint l = 0u; l < 32u; ++l) {
        const uint ql = (s0_u8(b + h * 64u + l + (k & 1u) * 32u) >> ((k >> 1) * 4u)) & 15u;
        const uint qh = (s0_u8(b + 128u + h * 32u + l) >> (2u * k)) & 3u;
        const float sc = float(s0_i8(b + 192u + h * 8u + l / 16u + 2u * k));
        w[l] = d * sc * float(int(ql | (qh << 4)) - 32);
    }
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
const float kvalues_iq4nl[16] = float[16](-127., -104., -83., -65., -49., -35., -22., -10., 1., 13., 25., 38., 53., 69., 89., 113.);
#if defined(TYPE_IQ4_NL)
#define QK 32u
#define QBYTES 18u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + c * QBYTES;
    const float d = s0_half(b);
    const uint qs = b + 2u;
#else
#define QK 256u
#define QBYTES 136u
void dequant_chunk(uint row, uint c, out float w[32]) {
    const uint b = row + (c >> 3) * QBYTES, ib = c & 7u;   // d scales_h scales_l[4] qs[128]
    const uint ls = ((s0_u8(b + 4u + ib / 2u) >> (4u * (ib & 1u))) & 15u) | (((s0_u16(b + 2u) >> (2u * ib)) & 3u) << 4);
    const float d = s0_half(b) * float(int(ls) - 32);
    const uint qs = b + 8u + ib * 16u;
#endif
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const uint q = s0_u8(qs + j);
        w[j] = d * kvalues_iq4nl[q & 15u];
        w[j + 16u] = d * kvalues_iq4nl[q >> 4];
    }
}
#else
#error "no TYPE_* defined"
#endif

// Bytes of a row of n elements.
uint row_bytes(uint n) { return n / QK * QBYTES; }
