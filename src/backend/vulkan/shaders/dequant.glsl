// Dequantization of single elements of a src0 row, for the weight type named by the TYPE_*
// define: dequant1(row, c, l) is element 32c + l of the row starting at byte `row` (ggml's
// block layouts, read through 16-bit words). Lane l of a workgroup reads element l of every
// chunk of 32, so neighbouring lanes read neighbouring bytes (coalesced on a GPU, vector loads
// on lavapipe) while a block's scales are the same address for all lanes. K-quant
// super-blocks hold 8 chunks. Float types: the caller bounds the last, partial chunk.
#if defined(TYPE_F32)
#define QK 1u
#define QBYTES 4u
float dequant1(uint row, uint c, uint l) { return uintBitsToFloat(s0_u32(row + 4u * (32u * c + l))); }
#elif defined(TYPE_F16)
#define QK 1u
#define QBYTES 2u
float dequant1(uint row, uint c, uint l) { return s0_half(row + 2u * (32u * c + l)); }
#elif defined(TYPE_BF16)
#define QK 1u
#define QBYTES 2u
float dequant1(uint row, uint c, uint l) { return uintBitsToFloat(s0_u16(row + 2u * (32u * c + l)) << 16); }
#elif defined(TYPE_Q4_0)
#define QK 32u
#define QBYTES 18u
float dequant1(uint row, uint c, uint l) {   // d qs[16]: low nibbles are elements 0-15
    const uint b = row + c * QBYTES;
    const uint q = (s0_u8(b + 2u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u;
    return float(int(q) - 8) * s0_half(b);
}
#elif defined(TYPE_Q4_1)
#define QK 32u
#define QBYTES 20u
float dequant1(uint row, uint c, uint l) {   // d m qs[16]
    const uint b = row + c * QBYTES;
    const uint q = (s0_u8(b + 4u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u;
    return float(q) * s0_half(b) + s0_half(b + 2u);
}
#elif defined(TYPE_Q5_0)
#define QK 32u
#define QBYTES 22u
float dequant1(uint row, uint c, uint l) {   // d qh[4] qs[16]: bit l of qh is element l's fifth bit
    const uint b = row + c * QBYTES;
    const uint q = ((s0_u8(b + 6u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u) | (((s0_u8(b + 2u + (l >> 3)) >> (l & 7u)) & 1u) << 4);
    return float(int(q) - 16) * s0_half(b);
}
#elif defined(TYPE_Q5_1)
#define QK 32u
#define QBYTES 24u
float dequant1(uint row, uint c, uint l) {   // d m qh[4] qs[16]
    const uint b = row + c * QBYTES;
    const uint q = ((s0_u8(b + 8u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u) | (((s0_u8(b + 4u + (l >> 3)) >> (l & 7u)) & 1u) << 4);
    return float(q) * s0_half(b) + s0_half(b + 2u);
}
#elif defined(TYPE_Q8_0)
#define QK 32u
#define QBYTES 34u
float dequant1(uint row, uint c, uint l) {   // d qs[32]
    const uint b = row + c * QBYTES;
    return float(s0_i8(b + 2u + l)) * s0_half(b);
}
#elif defined(TYPE_Q2_K)
#define QK 256u
#define QBYTES 84u
float dequant1(uint row, uint c, uint l) {   // scales[16] qs[64] d dmin
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u, h = sub >> 2, j = sub & 3u;
    const uint sc = s0_u8(b + h * 8u + j * 2u + (l >> 4));
    const uint q = (s0_u8(b + 16u + h * 32u + l) >> (2u * j)) & 3u;
    return s0_half(b + 80u) * float(sc & 15u) * float(q) - s0_half(b + 82u) * float(sc >> 4);
}
#elif defined(TYPE_Q3_K)
#define QK 256u
#define QBYTES 110u
float dequant1(uint row, uint c, uint l) {   // hmask[32] qs[64] scales[12] d
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u, h = sub >> 2, j = sub & 3u;
    // The 6-bit scale `is` of 16: low 4 bits from bytes 0-7, high 2 bits from bytes 8-11.
    const uint is = h * 8u + j * 2u + (l >> 4), g = is >> 2, k = is & 3u;
    const uint lo = s0_u8(b + 96u + k + ((g & 1u) << 2));
    const uint low = g < 2u ? (lo & 15u) : (lo >> 4);
    const uint high = (s0_u8(b + 104u + k) >> (2u * g)) & 3u;
    const float dl = s0_half(b + 108u) * float(int(low | (high << 4)) - 32);
    const uint q = (s0_u8(b + 32u + h * 32u + l) >> (2u * j)) & 3u;
    const bool hi = (s0_u8(b + l) & (1u << (h * 4u + j))) != 0u;
    return dl * float(int(q) - (hi ? 0 : 4));
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
float dequant1(uint row, uint c, uint l) {   // d dmin scales[12] (qh[32]) qs[128]
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u;
    float sc, m;
    scale_min_k4(b + 4u, sub, sc, m);
    uint q = (s0_u8(b + QS_AT + (sub >> 1) * 32u + l) >> ((sub & 1u) * 4u)) & 15u;
#if defined(TYPE_Q5_K)
    q |= ((s0_u8(b + 16u + l) >> sub) & 1u) << 4;
#endif
    return s0_half(b) * sc * float(q) - s0_half(b + 2u) * m;
}
#elif defined(TYPE_Q6_K)
#define QK 256u
#define QBYTES 210u
float dequant1(uint row, uint c, uint l) {   // ql[128] qh[64] scales[16] d
    const uint b = row + (c >> 3) * QBYTES, sub = c & 7u, h = sub >> 2, k = sub & 3u;
    const uint ql = (s0_u8(b + h * 64u + l + (k & 1u) * 32u) >> ((k >> 1) * 4u)) & 15u;
    const uint qh = (s0_u8(b + 128u + h * 32u + l) >> (2u * k)) & 3u;
    const float sc = float(s0_i8(b + 192u + h * 8u + l / 16u + 2u * k));
    return s0_half(b + 208u) * sc * float(int(ql | (qh << 4)) - 32);
}
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
const float kvalues_iq4nl[16] = float[16](-127., -104., -83., -65., -49., -35., -22., -10., 1., 13., 25., 38., 53., 69., 89., 113.);
#if defined(TYPE_IQ4_NL)
#define QK 32u
#define QBYTES 18u
float dequant1(uint row, uint c, uint l) {   // d qs[16]
    const uint b = row + c * QBYTES;
    return s0_half(b) * kvalues_iq4nl[(s0_u8(b + 2u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u];
}
#else
#define QK 256u
#define QBYTES 136u
float dequant1(uint row, uint c, uint l) {   // d scales_h scales_l[4] qs[128]
    const uint b = row + (c >> 3) * QBYTES, ib = c & 7u;
    const uint ls = ((s0_u8(b + 4u + ib / 2u) >> (4u * (ib & 1u))) & 15u) | (((s0_u16(b + 2u) >> (2u * ib)) & 3u) << 4);
    const float d = s0_half(b) * float(int(ls) - 32);
    return d * kvalues_iq4nl[(s0_u8(b + 8u + ib * 16u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u];
}
#endif
#else
#error "no TYPE_* defined"
#endif

// Four consecutive elements 128c + 4l .. 128c + 4l + 3 of a row (lane l of 32 takes the l-th
// group of four of every 128 elements): w[e] = dequant1 of each, in fewer loads for the
// common types (one 32-bit word of quants, one scale). Other types go element by element.
#if defined(TYPE_Q4_0)
void dequant4(uint row, uint c, uint l, out float w[4]) {
    const uint b = row + (4u * c + (l >> 3)) * QBYTES, i = l & 7u;
    const uint q = s0_u32(b + 2u + 4u * (i & 3u)) >> ((i >> 2) * 4u);   // nibbles of bytes 4(i%4)..+3
    const float d = s0_half(b);
    [[unroll]] for (uint e = 0u; e < 4u; ++e) w[e] = float(int((q >> (8u * e)) & 15u) - 8) * d;
}
#elif defined(TYPE_Q8_0)
void dequant4(uint row, uint c, uint l, out float w[4]) {
    const uint b = row + (4u * c + (l >> 3)) * QBYTES;
    const uint q = s0_u32(b + 2u + 4u * (l & 7u));
    const float d = s0_half(b);
    [[unroll]] for (uint e = 0u; e < 4u; ++e) w[e] = float(int(((q >> (8u * e)) & 0xFFu) << 24) >> 24) * d;
}
#elif defined(TYPE_Q4_K) || defined(TYPE_Q5_K)
void dequant4(uint row, uint c, uint l, out float w[4]) {
    const uint k = 128u * c + 4u * l;                  // first element
    const uint b = row + (k >> 8) * QBYTES, sub = (k >> 5) & 7u, i = k & 31u;
    float sc, m;
    scale_min_k4(b + 4u, sub, sc, m);
    const float dl = s0_half(b) * sc, ml = s0_half(b + 2u) * m;
    const uint q = s0_u32(b + QS_AT + (sub >> 1) * 32u + i) >> ((sub & 1u) * 4u);
#if defined(TYPE_Q5_K)
    const uint qh = s0_u32(b + 16u + i) >> sub;
#endif
    [[unroll]] for (uint e = 0u; e < 4u; ++e) {
        uint v = (q >> (8u * e)) & 15u;
#if defined(TYPE_Q5_K)
        v |= ((qh >> (8u * e)) & 1u) << 4;
#endif
        w[e] = dl * float(v) - ml;
    }
}
#elif defined(TYPE_Q6_K)
void dequant4(uint row, uint c, uint l, out float w[4]) {
    const uint k = 128u * c + 4u * l;
    const uint b = row + (k >> 8) * QBYTES, sub = (k >> 5) & 7u, h = sub >> 2, kk = sub & 3u, i = k & 31u;
    const uint ql = s0_u32(b + h * 64u + i + (kk & 1u) * 32u) >> ((kk >> 1) * 4u);
    const uint qh = s0_u32(b + 128u + h * 32u + i) >> (2u * kk);
    const float d = s0_half(b + 208u) * float(s0_i8(b + 192u + h * 8u + i / 16u + 2u * kk));
    [[unroll]] for (uint e = 0u; e < 4u; ++e)
        w[e] = d * float(int(((ql >> (8u * e)) & 15u) | (((qh >> (8u * e)) & 3u) << 4)) - 32);
}
#else
void dequant4(uint row, uint c, uint l, out float w[4]) {
    [[unroll]] for (uint e = 0u; e < 4u; ++e) {
        const uint k = 128u * c + 4u * l + e;
        w[e] = dequant1(row, k >> 5, k & 31u);
    }
}
#endif
