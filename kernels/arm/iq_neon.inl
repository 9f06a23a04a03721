// NEON dot products of the grid i-quants (against Q8_K) and MXFP4 (against Q8_0), included
// by dot_neon.cpp inside its anonymous namespace. Each super-block's integer sum is the
// scalar reference's (dot_iq_scalar.cpp): the signs are put on the grid magnitudes (int8
// weights in [-62, 62]; IQ1 weights are 8 * level +- 1, in [-9, 9]), sdot gives each
// 16 / 32 weights' int32 sum, and the odd sub-block scales 2s+1 multiply those sums. No
// step can overflow, so the int32 sum is exact; kquant_tile then runs the scalar's float
// steps: acc = fma(y.d * d, isum, acc) per super-block, times the type's factor at the end.

// Signed weights of one super-block (element order) and one scale per kGroup (16 or 32)
// elements.
template <int kGroup>
struct IqPrep {
    int8x16_t w[16];
    int32_t sc[kQKK / kGroup];
    int32_t isum(const block_q8_K& y) const {
        int32x4_t s = vdupq_n_s32(0);
        if constexpr (kGroup == 32) {
            for (int ib = 0; ib < 8; ++ib) {
                const int32x4_t d = vdotq_s32(vdotq_s32(vdupq_n_s32(0), w[2 * ib], vld1q_s8(y.qs + 32 * ib)),
                                              w[2 * ib + 1], vld1q_s8(y.qs + 32 * ib + 16));
                s = vmlaq_n_s32(s, d, sc[ib]);
            }
        } else {
            for (int j = 0; j < 16; ++j)
                s = vmlaq_n_s32(s, vdotq_s32(vdupq_n_s32(0), w[j], vld1q_s8(y.qs + 16 * j)), sc[j]);
        }
        return vaddvq_s32(s);
    }
};

// 16 magnitudes with signs: weight 8k + j is negated where bit j of sign byte k is set.
inline int8x16_t with_signs(uint8x16_t mag, uint8_t s0, uint8_t s1) {
    static constexpr uint8_t kBits[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t negative = vtstq_u8(vcombine_u8(vdup_n_u8(s0), vdup_n_u8(s1)), vld1q_u8(kBits));
    const int8x16_t m = vreinterpretq_s8_u8(negative);
    return vsubq_s8(veorq_s8(vreinterpretq_s8_u8(mag), m), m);  // (x ^ -1) - (-1) = -x
}

inline uint8x16_t grid8x2(uint64_t e0, uint64_t e1) { return vcombine_u8(vcreate_u8(e0), vcreate_u8(e1)); }

inline uint8x16_t grid4x4(uint32_t e0, uint32_t e1, uint32_t e2, uint32_t e3) {
    const uint32_t e[4] = {e0, e1, e2, e3};
    return vreinterpretq_u8_u32(vld1q_u32(e));
}

// The float steps shared by every i-quant (the scalar's superblock_dot).
template <class K>
struct IqSteps {
    template <class Prep, class W>
    static void dot(const Prep& p, const W& b, const block_q8_K& y, float& acc) {
        acc = std::fma(y.d * fp16_to_f32(K::d_bits(b)), static_cast<float>(p.isum(y)), acc);
    }
};

template <class W>
uint16_t iq_d_bits(const W& b) {
    return b.d;
}

struct NIq2xxs : IqSteps<NIq2xxs> {
    using W = block_iq2_xxs;
    using Prep = IqPrep<32>;
    static constexpr float kFactor = 0.125f;
    static uint16_t d_bits(const W& b) { return iq_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq2xxsGrid;
        for (int ib = 0; ib < 8; ++ib) {
            uint32_t aux[2];
            std::memcpy(aux, b.qs + 4 * ib, 8);
            uint8_t s[4];
            for (int l = 0; l < 4; ++l) s[l] = iq_signs_from7(aux[1] >> (7 * l));
            p.w[2 * ib] = with_signs(grid8x2(g[aux[0] & 255], g[(aux[0] >> 8) & 255]), s[0], s[1]);
            p.w[2 * ib + 1] = with_signs(grid8x2(g[(aux[0] >> 16) & 255], g[aux[0] >> 24]), s[2], s[3]);
            p.sc[ib] = static_cast<int32_t>(2 * (aux[1] >> 28) + 1);
        }
    }
};

struct NIq2xs : IqSteps<NIq2xs> {
    using W = block_iq2_xs;
    using Prep = IqPrep<16>;
    static constexpr float kFactor = 0.125f;
    static uint16_t d_bits(const W& b) { return iq_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq2xsGrid;
        for (int ib = 0; ib < 8; ++ib) {
            const uint16_t* q = b.qs + 4 * ib;
            for (int h = 0; h < 2; ++h) {
                const uint16_t q0 = q[2 * h], q1 = q[2 * h + 1];
                p.w[2 * ib + h] =
                    with_signs(grid8x2(g[q0 & 511], g[q1 & 511]), iq_signs_from7(q0 >> 9), iq_signs_from7(q1 >> 9));
                p.sc[2 * ib + h] = 2 * ((b.scales[ib] >> (4 * h)) & 0xF) + 1;
            }
        }
    }
};

struct NIq2s : IqSteps<NIq2s> {
    using W = block_iq2_s;
    using Prep = IqPrep<16>;
    static constexpr float kFactor = 0.125f;
    static uint16_t d_bits(const W& b) { return iq_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq2sGrid;
        const uint8_t* signs = b.qs + kQKK / 8;
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* q = b.qs + 4 * ib;
            const int qh = b.qh[ib];
            for (int h = 0; h < 2; ++h) {
                const int l = 2 * h;
                const int i0 = q[l] | ((qh << (8 - 2 * l)) & 0x300), i1 = q[l + 1] | ((qh << (6 - 2 * l)) & 0x300);
                p.w[2 * ib + h] = with_signs(grid8x2(g[i0], g[i1]), signs[4 * ib + l], signs[4 * ib + l + 1]);
                p.sc[2 * ib + h] = 2 * ((b.scales[ib] >> (4 * h)) & 0xF) + 1;
            }
        }
    }
};

struct NIq3xxs : IqSteps<NIq3xxs> {
    using W = block_iq3_xxs;
    using Prep = IqPrep<32>;
    static constexpr float kFactor = 0.25f;
    static uint16_t d_bits(const W& b) { return iq_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq3xxsGrid;
        const uint8_t* scales_and_signs = b.qs + kQKK / 4;
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* q = b.qs + 8 * ib;
            uint32_t aux;
            std::memcpy(&aux, scales_and_signs + 4 * ib, 4);
            uint8_t s[4];
            for (int l = 0; l < 4; ++l) s[l] = iq_signs_from7(aux >> (7 * l));
            p.w[2 * ib] = with_signs(grid4x4(g[q[0]], g[q[1]], g[q[2]], g[q[3]]), s[0], s[1]);
            p.w[2 * ib + 1] = with_signs(grid4x4(g[q[4]], g[q[5]], g[q[6]], g[q[7]]), s[2], s[3]);
            p.sc[ib] = static_cast<int32_t>(2 * (aux >> 28) + 1);
        }
    }
};

struct NIq3s : IqSteps<NIq3s> {
    using W = block_iq3_s;
    using Prep = IqPrep<32>;
    static constexpr float kFactor = 1.0f;
    static uint16_t d_bits(const W& b) { return iq_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq3sGrid;
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* q = b.qs + 8 * ib;
            const int qh = b.qh[ib];
            uint32_t e[8];
            for (int k = 0; k < 8; ++k) e[k] = g[q[k] | (((qh >> k) & 1) << 8)];
            const uint8_t* s = b.signs + 4 * ib;
            p.w[2 * ib] = with_signs(grid4x4(e[0], e[1], e[2], e[3]), s[0], s[1]);
            p.w[2 * ib + 1] = with_signs(grid4x4(e[4], e[5], e[6], e[7]), s[2], s[3]);
            p.sc[ib] = 2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1;
        }
    }
};

// IQ1: levels -1, 0, +1 (int8 grid bytes) as 8 * level + shift, shift +-1 per 8 weights.
inline int8x16_t iq1_weights(uint64_t e0, uint64_t e1, int8x16_t shift) {
    return vaddq_s8(vshlq_n_s8(vreinterpretq_s8_u8(grid8x2(e0, e1)), 3), shift);
}

inline int8x16_t iq1_shift(bool negative0, bool negative1) {
    return vcombine_s8(vdup_n_s8(negative0 ? -1 : 1), vdup_n_s8(negative1 ? -1 : 1));
}

struct NIq1s : IqSteps<NIq1s> {
    using W = block_iq1_s;
    using Prep = IqPrep<32>;
    static constexpr float kFactor = 0.125f;
    static uint16_t d_bits(const W& b) { return iq_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq1sGrid;
        for (int ib = 0; ib < 8; ++ib) {
            const int qh = b.qh[ib];
            const uint8_t* q = b.qs + 4 * ib;
            const int8x16_t shift = vdupq_n_s8(qh & 0x8000 ? -1 : 1);
            p.w[2 * ib] = iq1_weights(g[q[0] | ((qh & 7) << 8)], g[q[1] | (((qh >> 3) & 7) << 8)], shift);
            p.w[2 * ib + 1] = iq1_weights(g[q[2] | (((qh >> 6) & 7) << 8)], g[q[3] | (((qh >> 9) & 7) << 8)], shift);
            p.sc[ib] = 2 * ((qh >> 12) & 7) + 1;
        }
    }
};

struct NIq1m : IqSteps<NIq1m> {
    using W = block_iq1_m;
    using Prep = IqPrep<16>;
    static constexpr float kFactor = 0.125f;
    static uint16_t d_bits(const W& b) { return iq1m_d_bits(b); }
    static void prep(const W& b, Prep& p) {
        const auto& g = kIq1sGrid;
        uint16_t sc[4];
        std::memcpy(sc, b.scales, 8);
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* q = b.qs + 4 * ib;
            const int s = sc[ib / 2] >> (6 * (ib % 2));
            for (int h = 0; h < 2; ++h) {  // 16 weights: groups 2h, 2h + 1, one qh byte
                const int hb = b.qh[2 * ib + h];
                p.w[2 * ib + h] = iq1_weights(g[q[2 * h] | ((hb & 7) << 8)], g[q[2 * h + 1] | (((hb >> 4) & 7) << 8)],
                                              iq1_shift((hb & 0x08) != 0, (hb & 0x80) != 0));
                p.sc[2 * ib + h] = 2 * ((s >> (3 * h)) & 7) + 1;
            }
        }
    }
};

// MXFP4: a 32-block type (q32_tile); levels from the doubled e2m1 table, scale from E8M0.
struct Mxfp4N {
    using W = block_mxfp4;
    static float scale(const W& b) { return e8m0_to_f32_half(b.e); }
    static void levels(const W& b, int8x16_t& lo, int8x16_t& hi) {
        const int8x16_t table = vld1q_s8(kMxfp4Values);
        const uint8x16_t q = vld1q_u8(b.qs);
        lo = vqtbl1q_s8(table, vandq_u8(q, vdupq_n_u8(0x0F)));
        hi = vqtbl1q_s8(table, vshrq_n_u8(q, 4));
    }
};
