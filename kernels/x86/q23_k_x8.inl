// Repacked Q2_K and Q3_K (block_q2_Kx8, block_q3_Kx8, kernels/repack.hpp): included by
// simd_x86.inl after the Rows8 / Rows16 lane policies and before kx8_groups, which calls the
// kx8_group below.

// Q3_K's sixteen six-bit scales of 8 * V::kRecords rows, minus 32, as signed bytes: byte k of
// out[t] is scale 4t + k (q3k_scale's values). Low nibbles: scales 0..7 from bytes 0..7,
// 8..15 from their high nibbles; the top two bits of scale 4t + k are bits 2t, 2t + 1 of
// byte 8 + k.
template <class V>
void q3_k_scales(const block_q3_Kx8& r0, const block_q3_Kx8& r1, typename V::I (&out)[4]) {
    using I = typename V::I;
    const I low4 = V::set1(0x0f0f0f0f), top2 = V::set1(0x03030303);
    const I d0 = V::lanes(r0.scales[0], r1.scales[0]), d1 = V::lanes(r0.scales[1], r1.scales[1]),
            d2 = V::lanes(r0.scales[2], r1.scales[2]);
    const I low[4] = {V::and_(d0, low4), V::and_(d1, low4), V::and_(V::template srl<4>(d0), low4),
                      V::and_(V::template srl<4>(d1), low4)};
    for (int t = 0; t < 4; ++t) {
        const I high = V::and_(V::srl_n(d2, 2 * t), top2);
        out[t] = V::sub8(V::or_(low[t], V::template sll<4>(high)), V::set1(0x20202020));
    }
}

// 8 * V::kRecords interleaved Q2_K or Q3_K rows x C activation columns: per row and column
// the exact sums of the scalar reference (in another order: they are exact), then its fused
// steps per super-block, the rows in the lanes. A group of 16 elements is four chunks at one
// shift: levels 0..3 (Q2_K), or Q3_K's level + 4 (0..7, its hmask bit as bit 2), whose
// products (at most 4 x 2 x 7 x 128 = 7168 in an int16 pair without VNNI) are summed before
// one multiply by the group's scale. Q2_K's mins, and Q3_K's -4 (4 x sum of scale x bsums),
// enter through int16 pairs of two groups' mins or scales against pairs of bsums.
template <class V, int C, class R>
    requires(std::is_same_v<R, block_q2_Kx8> || std::is_same_v<R, block_q3_Kx8>)
void kx8_group(int64_t nb, const R* x0, const R* x1, const uint8_t* a, size_t as, float* c, size_t cs) {
    constexpr bool kQ3 = std::is_same_v<R, block_q3_Kx8>;
    using I = typename V::I;
    using F = typename V::F;
    // Shifts of a chunk taken at once (each chunk loaded once per kShifts groups, kShifts x C
    // sums in registers): all four when decoding, two for prompts (Q2_K 1B pp128 `-t 1`,
    // against one: AVX2 60 -> 62 t/s, AVX-512 115 -> 122; four spilled the sums on AVX2, 56).
    constexpr int kShifts = C == 1 ? 4 : 2;
    F acc[C];
    for (int j = 0; j < C; ++j) acc[j] = V::zerof();
    const I three = V::set1(0x03030303), four = V::set1(0x04040404), nibble16 = V::set1(0x000f000f),
            nibble32 = V::set1(0x0f);
    // Byte shuffles, built once (inside the loops GCC built each from scalar code every time).
    // Q2_K: scale byte k of each dword to both int16 halves (madd) or to the int32 lane
    // (mullo), then masked; Q3_K: the signed byte k to the top of each int16 (or of the int32),
    // then shifted down. Pairs: bytes e, e + 1 to the two int16 halves (to the top for Q3_K).
    I scale_bytes[4], pair_bytes[2];
    for (int k = 0; k < 4; ++k)
        scale_bytes[k] = kQ3 ? (V::kInt16Sums ? dword_pattern<V>(-1, k, -1, k) : dword_pattern<V>(-1, -1, -1, k))
                             : (V::kInt16Sums ? dword_pattern<V>(k, -1, k, -1) : dword_pattern<V>(k, -1, -1, -1));
    for (int e = 0; e < 2; ++e)
        pair_bytes[e] = kQ3 ? dword_pattern<V>(-1, 2 * e, -1, 2 * e + 1) : dword_pattern<V>(2 * e, -1, 2 * e + 1, -1);
    for (int64_t b = 0; b < nb; ++b) {
        const R& r0 = x0[b];
        const R& r1 = x1[V::kRecords == 2 ? b : 0];
        if (C == 1 && V::kRecords == 1) prefetch_ahead(x0, b, kKPrefetch);  // decoding streams the weights
        const block_q8_K* y[C];
        for (int j = 0; j < C; ++j) y[j] = reinterpret_cast<const block_q8_K*>(a + as * j) + b;
        I sc[4];  // dword t: the scales (Q2_K: and mins) of groups 4t..4t+3, one byte each
        if constexpr (kQ3) q3_k_scales<V>(r0, r1, sc);
        else
            for (int t = 0; t < 4; ++t) sc[t] = V::lanes(r0.scales[t], r1.scales[t]);
        auto scale_of = [&](int group) {
            const I s = V::shuffle(sc[group / 4], scale_bytes[group % 4]);
            if constexpr (kQ3) return V::kInt16Sums ? V::template sra16<8>(s) : V::template sra32<24>(s);
            else return V::and_(s, V::kInt16Sums ? nibble16 : nibble32);
        };
        I isum[C], pairs[C];
        for (int j = 0; j < C; ++j) isum[j] = pairs[j] = V::zero();
        for (int h = 0; h < 2; ++h) {
            for (int part = 0; part < 2; ++part) {  // chunks 8h + 4part.. : groups 8h + 2s + part
                for (int s0 = 0; s0 < 4; s0 += kShifts) {
                    I scale[kShifts];
                    for (int i = 0; i < kShifts; ++i) scale[i] = scale_of(8 * h + 2 * (s0 + i) + part);
                    I d[kShifts][C];
                    for (int i = 0; i < kShifts; ++i)
                        for (int j = 0; j < C; ++j) d[i][j] = V::zero();
                    for (int cc = 4 * part; cc < 4 * part + 4; ++cc) {
                        const I q = V::lanes(r0.qs[8 * h + cc], r1.qs[8 * h + cc]);
                        // Q3_K: hmask bit 4h + s of each byte moved to bit 2 + s (a 32-bit shift: up
                        // by 2 for the low half's bits 0..3, down by 2 for the high half's 4..7,
                        // so no byte's bit is pushed out of the lane)
                        I hm = V::zero();
                        if constexpr (kQ3) {
                            const I m = V::lanes(r0.hmask[cc], r1.hmask[cc]);
                            hm = h == 0 ? V::template sll<2>(m) : V::template srl<2>(m);
                        }
                        for (int i = 0; i < kShifts; ++i) {
                            const int s = s0 + i;
                            I lv = V::and_(V::srl_n(q, 2 * s), three);
                            if constexpr (kQ3) lv = V::or_(lv, V::and_(V::srl_n(hm, s), four));
                            for (int j = 0; j < C; ++j)
                                d[i][j] = V::dot4(d[i][j], lv, V::set1(dword_at(y[j]->qs + 128 * h + 32 * s + 4 * cc)));
                        }
                    }
                    for (int i = 0; i < kShifts; ++i)
                        for (int j = 0; j < C; ++j) isum[j] = V::add(isum[j], V::scaled(d[i][j], scale[i]));
                }
            }
        }
        // Q2_K's summ, or Q3_K's sum of scale x bsums: int16 pairs of groups 2t, 2t + 1 against
        // (bsums[2t], bsums[2t + 1])
        for (int t = 0; t < 8; ++t) {
            const I s = V::shuffle(sc[t / 2], pair_bytes[t % 2]);
            const I two = kQ3 ? V::template sra16<8>(s) : V::and_(V::template srl<4>(s), nibble16);
            for (int j = 0; j < C; ++j) pairs[j] = V::dot2(pairs[j], two, V::set1(dword_at(y[j]->bsums + 2 * t)));
        }
        const F dx = V::halves(r0.d, r1.d);
        for (int j = 0; j < C; ++j) {
            const F yd = V::set1f(y[j]->d);
            if constexpr (kQ3) {  // (level + 4 - 4) x y with the scales, exactly
                acc[j] = V::fmadd(V::mul(dx, yd), V::cvt(V::sub(isum[j], V::template sll<2>(pairs[j]))), acc[j]);
            } else {
                acc[j] = V::fmadd(V::mul(dx, yd), V::cvt(isum[j]), acc[j]);
                acc[j] = V::fnmadd(V::mul(V::halves(r0.dmin, r1.dmin), yd), V::cvt(pairs[j]), acc[j]);
            }
        }
    }
    for (int j = 0; j < C; ++j) V::store(c + cs * j, acc[j]);
}
