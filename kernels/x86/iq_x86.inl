// x86 dot products of the grid i-quants and MXFP4 (included by simd_x86.inl, inside its
// anonymous namespace). Each super-block's integer sum is the scalar reference's
// (dot_iq_scalar.cpp), built with maddubs / madd: grid magnitudes are unsigned (< 64), the
// signs move onto the activations, and sub-block scales (2s+1 < 32) multiply int16 pairs,
// so nothing saturates and the int32 sums are exact. kquant_tile then runs the scalar's
// float steps.

// 32 bytes of +1 / -1: byte 8k + j is -1 where bit j of sign byte k (of `four`) is set.
inline __m256i signs_from_bytes(uint32_t four) { return _mm256_or_si256(byte_mask_of_bits(four), _mm256_set1_epi8(1)); }

// For each 7-bit sign field (the eighth sign by parity): 8 bytes of +1 / -1, so that four
// table loads give a sub-block's signs (the bit tests above cost more when decoding).
constexpr std::array<uint64_t, 128> kSignMasks = [] {
    std::array<uint64_t, 128> t{};
    for (uint32_t i = 0; i < 128; ++i)
        for (int j = 0; j < 8; ++j)
            t[i] |= static_cast<uint64_t>((iq_signs_from7(i) >> j) & 1 ? 0xFF : 0x01) << (8 * j);
    return t;
}();

// The signs of 32 weights from four 7-bit fields, field l at bit 7 l of `packed28`.
inline __m256i signs_from7x4(uint32_t packed28) {
    return _mm256_set_epi64x(static_cast<long long>(kSignMasks[(packed28 >> 21) & 127]),
                             static_cast<long long>(kSignMasks[(packed28 >> 14) & 127]),
                             static_cast<long long>(kSignMasks[(packed28 >> 7) & 127]),
                             static_cast<long long>(kSignMasks[packed28 & 127]));
}

inline __m256i grid8x4(uint64_t e0, uint64_t e1, uint64_t e2, uint64_t e3) {
    return _mm256_set_epi64x(static_cast<long long>(e3), static_cast<long long>(e2), static_cast<long long>(e1),
                             static_cast<long long>(e0));
}

// One sub-block (32 weights) of a grid type: unsigned magnitudes, +-1 signs, int16 scales.
struct SignedSub {
    __m256i mag, sign, scale;
    __m256i dot(const int8_t* y) const { return _mm256_maddubs_epi16(mag, _mm256_sign_epi8(load32(y), sign)); }
};

// Sub-blocks of unsigned magnitudes with +-1 signs and int16 scales (one per 16 elements).
struct SignedGridPrep {
    SignedSub sub[8];
    __m256i dot(const block_q8_K& y) const {
        __m256i s = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ++ib) {
            s = madd_add(s, sub[ib].dot(y.qs + 32 * ib), sub[ib].scale);
            sum_in_order(s);
        }
        return s;
    }
};

// The grid types' prompt (Prep) and decoding (sums1) paths, from their sub_block(b, ib).
// Decoding multiplies each sub-block as soon as it is built: the Prep's 24 vectors are more
// than the registers, and the tile's one-column form kept its accumulator on the stack. GCC
// unrolls that loop for some types and not others (IQ3_XXS's stayed rolled); unrolled, the
// loads of one sub-block overlap the next one's products (AVX2 IQ3_XXS tg64 ~11.4 -> ~12.3).
template <class K>
struct SignedGrid {
    static constexpr bool kMins = false;
    using Prep = SignedGridPrep;
    template <class W>
    static void prep(const W& b, Prep& p) {
        for (int ib = 0; ib < 8; ++ib) p.sub[ib] = K::sub_block(b, ib);
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) { return p.dot(y); }
    template <class W>
    static void sums1(const W& b, const block_q8_K& y, __m256i& isum_out, __m256i&) {
        __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 8
        for (int ib = 0; ib < 8; ++ib) {
            const SignedSub sub = K::sub_block(b, ib);
            s = madd_add(s, sub.dot(y.qs + 32 * ib), sub.scale);
        }
        isum_out = s;
    }
};

struct KIq2xxs : SignedGrid<KIq2xxs> {
    using W = block_iq2_xxs;
    static constexpr float kFactor = 0.125f;
    static SignedSub sub_block(const W& b, int ib) {
        uint32_t aux[2];
        std::memcpy(aux, b.qs + 4 * ib, 8);
        const auto& g = kIq2xxsGrid;
        return {grid8x4(g[aux[0] & 255], g[(aux[0] >> 8) & 255], g[(aux[0] >> 16) & 255], g[aux[0] >> 24]), signs_from7x4(aux[1]),
                _mm256_set1_epi16(static_cast<int16_t>(2 * (aux[1] >> 28) + 1))};
    }
};

struct KIq2xs : SignedGrid<KIq2xs> {
    using W = block_iq2_xs;
    static constexpr float kFactor = 0.125f;
    static SignedSub sub_block(const W& b, int ib) {
        const uint16_t* q = b.qs + 4 * ib;
        const auto& g = kIq2xsGrid;
        return {grid8x4(g[q[0] & 511], g[q[1] & 511], g[q[2] & 511], g[q[3] & 511]),
                _mm256_set_epi64x(static_cast<long long>(kSignMasks[q[3] >> 9]), static_cast<long long>(kSignMasks[q[2] >> 9]),
                                  static_cast<long long>(kSignMasks[q[1] >> 9]), static_cast<long long>(kSignMasks[q[0] >> 9])),
                scale_pair(2 * (b.scales[ib] & 0xF) + 1, 2 * (b.scales[ib] >> 4) + 1)};
    }
};

struct KIq2s : SignedGrid<KIq2s> {
    using W = block_iq2_s;
    static constexpr float kFactor = 0.125f;
    static SignedSub sub_block(const W& b, int ib) {
        const uint8_t* q = b.qs + 4 * ib;
        const int qh = b.qh[ib];
        const auto& g = kIq2sGrid;
        uint32_t s;
        std::memcpy(&s, b.qs + kQKK / 8 + 4 * ib, 4);  // the signs follow the grid indices
        return {grid8x4(g[q[0] | ((qh << 8) & 0x300)], g[q[1] | ((qh << 6) & 0x300)], g[q[2] | ((qh << 4) & 0x300)],
                        g[q[3] | ((qh << 2) & 0x300)]),
                signs_from_bytes(s), scale_pair(2 * (b.scales[ib] & 0xF) + 1, 2 * (b.scales[ib] >> 4) + 1)};
    }
};

// IQ3_XXS's eight 4-byte grid entries of a sub-block come from eight scalar loads: one
// vpgatherdd cost more here (Zen 5, AVX2 decoding ~10.3 -> ~11.9 t/s without it).
struct KIq3xxs : SignedGrid<KIq3xxs> {
    using W = block_iq3_xxs;
    static constexpr float kFactor = 0.25f;
    static SignedSub sub_block(const W& b, int ib) {
        const uint8_t* q = b.qs + 8 * ib;
        auto entry = [&](int k) { return static_cast<int>(kIq3xxsGrid[q[k]]); };
        uint32_t aux;  // the scales and signs follow the grid indices
        std::memcpy(&aux, b.qs + kQKK / 4 + 4 * ib, 4);
        return {_mm256_setr_epi32(entry(0), entry(1), entry(2), entry(3), entry(4), entry(5), entry(6), entry(7)), signs_from7x4(aux),
                _mm256_set1_epi16(static_cast<int16_t>(2 * (aux >> 28) + 1))};
    }
};

struct KIq3s : SignedGrid<KIq3s> {
    using W = block_iq3_s;
    static constexpr float kFactor = 1.0f;
    static SignedSub sub_block(const W& b, int ib) {
        const int qh = b.qh[ib];
        // index k = q[k] | bit k of qh << 8, for the eight entries at once, then one gather
        // (eight scalar loads, as IQ3_XXS's, measured ~8% slower here: their indices take a
        // scalar shift and mask each)
        const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + 8 * ib)));
        const __m256i high = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(qh), _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1)),
                                              _mm256_set1_epi32(256));
        uint32_t s;
        std::memcpy(&s, b.signs + 4 * ib, 4);
        return {_mm256_i32gather_epi32(reinterpret_cast<const int*>(kIq3sGrid.data()), _mm256_or_si256(low, high), 4),
                signs_from_bytes(s),
                _mm256_set1_epi16(static_cast<int16_t>(2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1))};
    }
};

// IQ1_M: each weight as the odd integer 8 * level +- 1 (level in -1..1, the shift's sign per
// 8 weights, finer than a bsum, so it stays in the weight): |w| <= 9, so the signed-byte dot
// cannot saturate.
struct Iq1Prep {
    __m256i absw[8], w[8], scale[8];
    __m256i dot(const block_q8_K& y) const {
        __m256i s = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ++ib) {
            const __m256i sy = _mm256_sign_epi8(load32(y.qs + 32 * ib), w[ib]);
            s = madd_add(s, _mm256_maddubs_epi16(absw[ib], sy), scale[ib]);
            sum_in_order(s);
        }
        return s;
    }
    void set(int ib, __m256i levels, __m256i shift, __m256i sc) {
        w[ib] = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), levels), shift);
        absw[ib] = _mm256_abs_epi8(w[ib]);
        scale[ib] = sc;
    }
};

// IQ1_S: the delta of a sub-block is one sign for its 32 weights, so its part of the sum is
// +-(2s+1) x (the sub-block's two activation bsums): one madd per super-block. What is left
// per sub-block is the dot of the -1 / 0 / +1 grid levels with y: sign(y, level) is already
// each product (|y| <= 127), pair-summed by maddubs with ones and scaled by 8 (2s+1). Before,
// each sub-block built 8 level + delta, its absolute value and a sign per element.
struct Iq1sPrep {
    __m256i level[8], scale8[8];
    __m256i delta;  // int16 pairs: +-(2s+1) for bsums 2 ib and 2 ib + 1
    __m256i dot(const block_q8_K& y) const {
        const __m256i ones = _mm256_set1_epi8(1);
        __m256i s = _mm256_madd_epi16(load32(y.bsums), delta);
        for (int ib = 0; ib < 8; ++ib) {
            s = madd_add(s, _mm256_maddubs_epi16(ones, _mm256_sign_epi8(load32(y.qs + 32 * ib), level[ib])), scale8[ib]);
            sum_in_order(s);
        }
        return s;
    }
};

struct KIq1s {
    using W = block_iq1_s;
    static constexpr bool kMins = false;
    static constexpr float kFactor = 0.125f;
    using Prep = Iq1sPrep;
    // Byte j of vector h: the byte of qh[] that u16 lane j / 2 needs, sub-block 4 h + lane / 4.
    static constexpr auto kQhWords = [] {
        std::array<std::array<int8_t, 32>, 2> t{};
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < 32; ++j) t[h][j] = static_cast<int8_t>(2 * (4 * h + j / 8) + (j & 1));  // qh is in both lanes
        return t;
    }();
    static void prep(const W& b, Prep& p) {
        // The 32 grid indices of the super-block in two vectors: qs[k] | bits 3 l.. 3 l + 2 of
        // qh[ib] << 8 (k = 4 ib + l; the shifts as multiplies: AVX2 has no per-lane 16-bit
        // shift), then one scalar load per grid entry (the scalar index arithmetic alone had
        // the decoding loop at ~45 instructions a sub-block).
        alignas(32) uint16_t idx[32];
        const __m256i qh = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qh)));
        const __m256i up = _mm256_setr_epi16(256, 32, 4, 0, 256, 32, 4, 0, 256, 32, 4, 0, 256, 32, 4, 0);
        const __m256i down = _mm256_setr_epi16(0, 0, 0, -32768, 0, 0, 0, -32768, 0, 0, 0, -32768, 0, 0, 0, -32768);  // >> 1
        for (int h = 0; h < 2; ++h) {
            const __m256i words = _mm256_shuffle_epi8(qh, load32(kQhWords[h].data()));
            const __m256i high = _mm256_and_si256(_mm256_or_si256(_mm256_mullo_epi16(words, up), _mm256_mulhi_epu16(words, down)),
                                                  _mm256_set1_epi16(0x700));
            const __m256i low = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16 * h)));
            _mm256_store_si256(reinterpret_cast<__m256i*>(idx + 16 * h), _mm256_or_si256(low, high));
        }
        const auto& g = kIq1sGrid;
        for (int ib = 0; ib < 8; ++ib) {
            const uint16_t* i = idx + 4 * ib;
            p.level[ib] = grid8x4(g[i[0]], g[i[1]], g[i[2]], g[i[3]]);
            p.scale8[ib] = _mm256_set1_epi16(static_cast<int16_t>(8 * (2 * ((b.qh[ib] >> 12) & 7) + 1)));
        }
        // In registers: sixteen int16 stores read back as one vector stall store forwarding.
        const __m128i qh8 = _mm256_castsi256_si128(qh);
        const __m128i scale = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(qh8, 11), _mm_set1_epi16(14)), _mm_set1_epi16(1));
        const __m128i neg = _mm_srai_epi16(qh8, 15);  // -1 where the delta is negative
        const __m256i signed32 = _mm256_cvtepu16_epi32(_mm_sub_epi16(_mm_xor_si128(scale, neg), neg));
        p.delta = _mm256_or_si256(signed32, _mm256_slli_epi32(signed32, 16));  // the same in both halves of each pair
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) { return p.dot(y); }
};

struct KIq1m {
    using W = block_iq1_m;
    static constexpr bool kMins = false;
    static constexpr float kFactor = 0.125f;
    static uint16_t d_bits(const W& b) { return iq1m_d_bits(b); }
    using Prep = Iq1Prep;
    static void prep(const W& b, Prep& p) {
        uint16_t sc[4];
        std::memcpy(sc, b.scales, 8);
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* q = b.qs + 4 * ib;
            const uint8_t* h = b.qh + 2 * ib;
            const auto& g = kIq1sGrid;
            const __m256i levels = grid8x4(g[q[0] | ((h[0] & 7) << 8)], g[q[1] | (((h[0] >> 4) & 7) << 8)],
                                           g[q[2] | ((h[1] & 7) << 8)], g[q[3] | (((h[1] >> 4) & 7) << 8)]);
            auto shift8 = [](int nibble) { return nibble & 0x08 ? static_cast<long long>(-1) : 0x0101010101010101ll; };
            const __m256i shift = _mm256_set_epi64x(shift8(h[1] >> 4), shift8(h[1]), shift8(h[0] >> 4), shift8(h[0]));
            const int s = sc[ib / 2] >> (6 * (ib % 2));
            p.set(ib, levels, shift, scale_pair(2 * (s & 7) + 1, 2 * ((s >> 3) & 7) + 1));
        }
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) { return p.dot(y); }
};

// MXFP4: a 32-block type; levels from the doubled e2m1 table, the block scale from E8M0.
struct Mxfp4K {
    using W = block_mxfp4;
    using A = block_q8_0;
    static constexpr bool kSigned = true, kOffset = false;
    static float scale(const W& b) { return e8m0_to_f32_half(b.e); }
    static __m256i levels(const W& b) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kMxfp4Values)));
        return _mm256_shuffle_epi8(table, unpack_nibbles(b.qs));
    }
};
