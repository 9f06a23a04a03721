// Repacked IQ4_XS (block_iq4_xsx8, kernels/repack.hpp): included by simd_x86.inl after the
// Rows8 / Rows16 lane policies and before kx8_groups, which calls the kx8_group below.
//
// The one-row IQ4_XS kernel (KXS) pays, per 32 weights of one row, a nibble unpack, a table
// lookup, the sign trick and a scale built in scalar code, then a horizontal sum and the float
// steps per super-block; with eight rows in the lanes every step serves eight rows, and the
// float steps run once per eight rows.

// The eight sub-block scales of 8 * V::kRecords rows, minus 32, as signed bytes: byte k of
// row r's lane holds its scale 2k in `even` and 2k + 1 in `odd`. The low nibbles come from
// scales_l (nibble ib at bits 4ib: byte k holds scales 2k and 2k + 1), the top two bits from
// scales_h (bits 2ib: nibble k holds those of scales 2k and 2k + 1), whose four nibbles are
// spread to the four bytes first.
template <class V>
void iq4_xs_scales(const block_iq4_xsx8& r0, const block_iq4_xsx8& r1, typename V::I& even, typename V::I& odd) {
    using I = typename V::I;
    const I low4 = V::set1(0x0f0f0f0f), minus32 = V::set1(0x20202020);
    const I sl = V::lanes(r0.scales_l, r1.scales_l);
    I h = V::words(r0.scales_h, r1.scales_h);
    h = V::and_(V::or_(h, V::template sll<8>(h)), V::set1(0x00ff00ff));  // nibbles 0, 1 -> byte 0; 2, 3 -> byte 2
    h = V::and_(V::or_(h, V::template sll<4>(h)), low4);                // nibble k -> byte k
    even = V::or_(V::and_(sl, low4), V::template sll<4>(V::and_(h, V::set1(0x03030303))));
    odd = V::or_(V::and_(V::template srl<4>(sl), low4), V::template sll<2>(V::and_(h, V::set1(0x0c0c0c0c))));
    even = V::sub8(even, minus32);
    odd = V::sub8(odd, minus32);
}

// Sub-block ib's scale of each row, sign-extended, in the form V::scaled multiplies by: in
// both int16 halves of the lane (int16 pair sums, madd), or as the int32 lane (VNNI, mullo).
template <class V>
typename V::I iq4_xs_scale_of(typename V::I even, typename V::I odd, int ib) {
    const typename V::I s = ib % 2 ? odd : even;
    const int byte = ib / 2;
    return V::kInt16Sums ? V::template sra16<8>(V::shuffle(s, dword_pattern<V>(-1, byte, -1, byte)))
                         : V::template sra32<24>(V::shuffle(s, dword_pattern<V>(-1, -1, -1, byte)));
}

// 8 * V::kRecords interleaved IQ4_XS rows x C activation columns: per row and column the
// exact isum of the scalar reference (sum over sub-blocks of scale x dot, in another order:
// it is exact), then its one fused step per super-block, the rows in the lanes.
// With VNNI the levels are looked up plus 128 (1..241, unsigned for vpdpbusd) and each
// sub-block's dot starts at -128 x its 32 activations' sum (two bsums). Without, the sign
// trick of dot_s8: |level| x (y with the level's sign), whose int16 pairs (at most
// 2 x 127 x 127) are multiplied by the scale at once, as two such pairs could overflow. Both
// rely on Q8_K levels in -127..127 (quantize_legacy.cpp and the SIMD quantize_q8_K cap them):
// a -128 would flip sign wrongly under the sign trick.
template <class V, int C>
void kx8_group(int64_t nb, const block_iq4_xsx8* x0, const block_iq4_xsx8* x1, const uint8_t* a, size_t as, float* c,
               size_t cs) {
    using I = typename V::I;
    using F = typename V::F;
    F acc[C];
    for (int j = 0; j < C; ++j) acc[j] = V::zerof();
    const I low4 = V::set1(0x0f0f0f0f);
    const __m128i levels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues));
#if POCKET_X86_VNNI
    const I table = V::broadcast16(_mm_xor_si128(levels, _mm_set1_epi8(static_cast<char>(0x80))));  // v ^ 0x80: v + 128 unsigned
#else
    const I table = V::broadcast16(levels);
#endif
    for (int64_t b = 0; b < nb; ++b) {
        const block_iq4_xsx8& r0 = x0[b];
        const block_iq4_xsx8& r1 = x1[V::kRecords == 2 ? b : 0];
        if (C == 1 && V::kRecords == 1) prefetch_ahead(x0, b, kKPrefetch);  // decoding streams the weights
        const block_q8_K* y[C];
        for (int j = 0; j < C; ++j) y[j] = reinterpret_cast<const block_q8_K*>(a + as * j) + b;
        I even, odd;
        iq4_xs_scales<V>(r0, r1, even, odd);
        I isum[C];
        for (int j = 0; j < C; ++j) isum[j] = V::zero();
#pragma GCC unroll 8  // ib constant: each scale's shuffle pattern folds to a constant
        for (int ib = 0; ib < 8; ++ib) {
            const I scale = iq4_xs_scale_of<V>(even, odd, ib);
#if POCKET_X86_VNNI
            I d[C];
            for (int j = 0; j < C; ++j) d[j] = V::set1(-128 * (y[j]->bsums[2 * ib] + y[j]->bsums[2 * ib + 1]));
#endif
#if POCKET_X86_ZMM
            if constexpr (C == 1 && V::kRecords == 1) {
                // Decoding: two chunks of the sub-block per 512-bit multiply-add, as the Q4_0
                // GEMV does (act_pairs): gemv_repacked/iq4_xs/avx512 from L2 38 -> 51 GB/s, 1B decoding
                // -t 1 42.1 -> 46.0 t/s (median of 6 alternating).
                const __m512i table16 = _mm512_broadcast_i32x4(_mm_xor_si128(levels, _mm_set1_epi8(static_cast<char>(0x80))));
                d[0] = nibble_pair_sums(&r0.qs[4 * ib][0][0], act_pairs(y[0]->qs + 32 * ib), d[0],
                                        [&](__m512i v) { return _mm512_shuffle_epi8(table16, v); });
            } else
#endif
            for (int k = 4 * ib; k < 4 * ib + 4; ++k) {
                const I q = V::lanes(r0.qs[k], r1.qs[k]);
                const I lo = V::shuffle(table, V::and_(q, low4)), hi = V::shuffle(table, V::and_(V::template srl<4>(q), low4));
#if POCKET_X86_VNNI
                for (int j = 0; j < C; ++j) {
                    const int8_t* yq = y[j]->qs + 32 * ib + 4 * (k % 4);
                    d[j] = V::dot4(d[j], lo, V::set1(dword_at(yq)));
                    d[j] = V::dot4(d[j], hi, V::set1(dword_at(yq + 16)));
                }
#else  // ymm only (no ZMM without VNNI)
                const I abs_lo = _mm256_sign_epi8(lo, lo), abs_hi = _mm256_sign_epi8(hi, hi);
                for (int j = 0; j < C; ++j) {
                    const int8_t* yq = y[j]->qs + 32 * ib + 4 * (k % 4);
                    const I p_lo = _mm256_maddubs_epi16(abs_lo, _mm256_sign_epi8(V::set1(dword_at(yq)), lo));
                    const I p_hi = _mm256_maddubs_epi16(abs_hi, _mm256_sign_epi8(V::set1(dword_at(yq + 16)), hi));
                    isum[j] = V::add(isum[j], V::add(V::scaled(p_lo, scale), V::scaled(p_hi, scale)));
                }
#endif
            }
#if POCKET_X86_VNNI
            for (int j = 0; j < C; ++j) isum[j] = V::add(isum[j], V::scaled(d[j], scale));
#endif
        }
        const F dx = V::halves(r0.d, r1.d);
        for (int j = 0; j < C; ++j) acc[j] = V::fmadd(V::mul(dx, V::set1f(y[j]->d)), V::cvt(isum[j]), acc[j]);
    }
    for (int j = 0; j < C; ++j) V::store(c + cs * j, acc[j]);
}
