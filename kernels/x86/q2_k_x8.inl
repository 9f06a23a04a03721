// Repacked Q2_K (block_q2_Kx8, kernels/repack.hpp): included by simd_x86.inl after the
// Rows8 / Rows16 lane policies and before kx8_groups, which calls the kx8_group below.

// 8 * V::kRecords interleaved Q2_K rows x C activation columns: per row and column the exact
// isum and summ of the scalar reference (in another order: they are exact), then its two
// fused steps per super-block, the rows in the lanes. A group of 16 elements is four chunks
// at one shift; its products (levels 0..3, at most 4 x 2 x 3 x 128 = 3072 in an int16 pair
// without VNNI) are summed before one multiply by the group's scale. The mins enter through
// (min, min) int16 pairs against pairs of the activations' group sums (bsums).
template <class V, int C>
void kx8_group(int64_t nb, const block_q2_Kx8* x0, const block_q2_Kx8* x1, const uint8_t* a, size_t as, float* c,
               size_t cs) {
    using I = typename V::I;
    using F = typename V::F;
    // Shifts of a chunk taken at once (each chunk loaded once per kShifts groups, kShifts x C
    // sums in registers): all four when decoding, two for prompts (1B pp128 `-t 1`, against
    // one: AVX2 60 -> 62 t/s, AVX-512 115 -> 122; four spilled the sums on AVX2, 56).
    constexpr int kShifts = C == 1 ? 4 : 2;
    F acc[C];
    for (int j = 0; j < C; ++j) acc[j] = V::zerof();
    const I three = V::set1(0x03030303), nibble16 = V::set1(0x000f000f), nibble32 = V::set1(0x0f);
    // Byte shuffles, built once (inside the loops GCC built each from scalar code every time):
    // scale byte k of each dword to both int16 halves (madd) or to the int32 lane (mullo), and
    // scale bytes e, e + 1 to the two int16 halves (for the mins).
    I scale_bytes[4], min_bytes[2];
    for (int k = 0; k < 4; ++k)
        scale_bytes[k] = V::kInt16Sums ? dword_pattern<V>(k, -1, k, -1) : dword_pattern<V>(k, -1, -1, -1);
    for (int e = 0; e < 2; ++e) min_bytes[e] = dword_pattern<V>(2 * e, -1, 2 * e + 1, -1);
    for (int64_t b = 0; b < nb; ++b) {
        const block_q2_Kx8& r0 = x0[b];
        const block_q2_Kx8& r1 = x1[V::kRecords == 2 ? b : 0];
        if (C == 1 && V::kRecords == 1) prefetch_ahead(x0, b, kKPrefetch);  // decoding streams the weights
        const block_q8_K* y[C];
        for (int j = 0; j < C; ++j) y[j] = reinterpret_cast<const block_q8_K*>(a + as * j) + b;
        I isum[C], summ[C];
        for (int j = 0; j < C; ++j) isum[j] = summ[j] = V::zero();
        for (int h = 0; h < 2; ++h) {
            for (int part = 0; part < 2; ++part) {  // chunks 8h + 4part.. : groups 8h + 2s + part
                for (int s0 = 0; s0 < 4; s0 += kShifts) {
                    I scale[kShifts];
                    for (int i = 0; i < kShifts; ++i) {
                        const int group = 8 * h + 2 * (s0 + i) + part;
                        const I sd = V::lanes(r0.scales[group / 4], r1.scales[group / 4]);
                        // the low nibble, in both int16 halves (madd) or as the int32 lane (mullo)
                        scale[i] = V::and_(V::shuffle(sd, scale_bytes[group % 4]), V::kInt16Sums ? nibble16 : nibble32);
                    }
                    I d[kShifts][C];
                    for (int i = 0; i < kShifts; ++i)
                        for (int j = 0; j < C; ++j) d[i][j] = V::zero();
                    for (int cc = 4 * part; cc < 4 * part + 4; ++cc) {
                        const I q = V::lanes(r0.qs[8 * h + cc], r1.qs[8 * h + cc]);
                        for (int i = 0; i < kShifts; ++i) {
                            const int s = s0 + i;
                            const I lv = V::and_(V::srl_n(q, 2 * s), three);
                            for (int j = 0; j < C; ++j)
                                d[i][j] = V::dot4(d[i][j], lv, V::set1(dword_at(y[j]->qs + 128 * h + 32 * s + 4 * cc)));
                        }
                    }
                    for (int i = 0; i < kShifts; ++i)
                        for (int j = 0; j < C; ++j) isum[j] = V::add(isum[j], V::scaled(d[i][j], scale[i]));
                }
            }
        }
        // summ: (min 2t, min 2t + 1) int16 pairs against (bsums[2t], bsums[2t + 1])
        for (int t = 0; t < 8; ++t) {
            const I sd = V::lanes(r0.scales[t / 2], r1.scales[t / 2]);
            const I mins = V::and_(V::template srl<4>(V::shuffle(sd, min_bytes[t % 2])), nibble16);
            for (int j = 0; j < C; ++j) summ[j] = V::dot2(summ[j], mins, V::set1(dword_at(y[j]->bsums + 2 * t)));
        }
        const F dx = V::halves(r0.d, r1.d), dmx = V::halves(r0.dmin, r1.dmin);
        for (int j = 0; j < C; ++j) {
            const F yd = V::set1f(y[j]->d);
            acc[j] = V::fmadd(V::mul(dx, yd), V::cvt(isum[j]), acc[j]);
            acc[j] = V::fnmadd(V::mul(dmx, yd), V::cvt(summ[j]), acc[j]);
        }
    }
    for (int j = 0; j < C; ++j) V::store(c + cs * j, acc[j]);
}
