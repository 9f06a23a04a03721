// x86 kernels for one ISA, included by dot_avx2.cpp and dot_avx512.cpp, each compiled with
// its own target flags. Everything here sits in an anonymous namespace on purpose: each
// including file gets its own copy, so the linker can never hand the AVX-512 build of a
// template to the AVX2 table.
//
// Each kernel reproduces the scalar order of kernels/dot_order.hpp exactly:
//  - integer sums per block / super-block (any order: they are exact),
//  - the same float operations, lane by lane, as the scalar reference.
// GEMM tiles run the very same per-output sequence as vec_dot (vec_dot IS the 1x1 tile),
// so C equals vec_dot bitwise whatever the tile shape or batch size.
//
// Before including, define POCKET_X86_VNNI (0/1) and POCKET_X86_ZMM (0/1). VNNI without ZMM
// is AVX-VNNI (the VEX form on ymm: Alder Lake and later Intel client cores, Zen 5).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/iq_grids.hpp"
#include "kernels/isa_table.hpp"
#include "kernels/repack.hpp"
#include "kernels/row_functions.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstddef>
#include <type_traits>

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace pocket::kernels {
namespace {

// One fp16 scale to f32 with F16C (the software fp16_to_f32 branches on the exponent; this
// sits in every K-quant super-block). Exact, as the conversion is for every half value.
inline float half_f32(uint16_t h) { return _cvtsh_ss(h); }

// ---------------------------------------------------------------- integer helpers

#if POCKET_X86_VNNI
// vpdpbusd / vpdpwssd on ymm: AVX-512 VL's encoding, or AVX-VNNI's (same results).
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i s) {
#if POCKET_X86_ZMM
    return _mm256_dpbusd_epi32(acc, u, s);
#else
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#endif
}
inline __m256i dpwssd(__m256i acc, __m256i a, __m256i b) {
#if POCKET_X86_ZMM
    return _mm256_dpwssd_epi32(acc, a, b);
#else
    return _mm256_dpwssd_avx_epi32(acc, a, b);
#endif
}
#endif

// Dot of 32 signed weights with 32 signed activations, as 8 int32 partial sums.
inline __m256i dot_s8(__m256i w, __m256i y) {
    const __m256i aw = _mm256_sign_epi8(w, w);  // |w| as unsigned bytes
    const __m256i sy = _mm256_sign_epi8(y, w);  // y with w's sign
#if POCKET_X86_VNNI
    return dpbusd(_mm256_setzero_si256(), aw, sy);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sy), _mm256_set1_epi16(1));
#endif
}

// Same for unsigned weights (0..31).
inline __m256i dot_u8(__m256i w, __m256i y) {
#if POCKET_X86_VNNI
    return dpbusd(_mm256_setzero_si256(), w, y);
#else
    return _mm256_madd_epi16(_mm256_maddubs_epi16(w, y), _mm256_set1_epi16(1));
#endif
}

inline int32_t hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// 16 packed nibbles -> 32 bytes: low nibbles first (elements 0..15), then high ones.
inline __m256i unpack_nibbles(const uint8_t* qs) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(b, 4), b);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// 32 bits -> 32 bytes, 0xFF where bit k (byte k / 8, bit k % 8) is set, else 0.
inline __m256i byte_mask_of_bits(uint32_t bits) {
    const __m256i spread = _mm256_shuffle_epi8(
        _mm256_set1_epi32(static_cast<int>(bits)),
        _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
    const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

// 32 bits -> 32 bytes, 0x10 where the bit is set (the 5th bit of Q5 levels).
inline __m256i bit4_from_bits(const uint8_t* qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    return _mm256_and_si256(byte_mask_of_bits(bits), _mm256_set1_epi8(0x10));
}

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Marks a running integer sum as complete at this point. With 16 ymm registers GCC computes
// every column's (or sub-block's) products before adding any and spills them to the stack;
// an empty asm that takes the sum as operand keeps each sum's chain in program order. No
// instruction is emitted and no bit changes. "v": any of AVX-512's 32 registers where present.
template <class Vec>  // __m256i, or __m512i in the AVX-512 tiles
inline void sum_in_order(Vec& s) { asm("" : "+v"(s)); }
template <class Vec>  // two sums at one point
inline void sum_in_order(Vec& a, Vec& b) { asm("" : "+v"(a), "+v"(b)); }

// Four bytes as one int32 (activation bytes broadcast against interleaved rows).
inline int32_t dword_at(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// ---------------------------------------------------------------- 32-element block types

// Per type: the block structs, and the weight bytes of block b as 32 int8 levels.
struct Q4_0K {
    using W = block_q4_0;
    using A = block_q8_0;
    static constexpr bool kSigned = true, kOffset = false;
    static __m256i levels(const W& b) { return _mm256_sub_epi8(unpack_nibbles(b.qs), _mm256_set1_epi8(8)); }
};
struct Q4_1K {
    using W = block_q4_1;
    using A = block_q8_1;
    static constexpr bool kSigned = false, kOffset = true;
    static __m256i levels(const W& b) { return unpack_nibbles(b.qs); }
};
struct Q5_0K {
    using W = block_q5_0;
    using A = block_q8_0;
    static constexpr bool kSigned = true, kOffset = false;
    static __m256i levels(const W& b) {
        return _mm256_sub_epi8(_mm256_or_si256(unpack_nibbles(b.qs), bit4_from_bits(b.qh)), _mm256_set1_epi8(16));
    }
};
struct Q5_1K {
    using W = block_q5_1;
    using A = block_q8_1;
    static constexpr bool kSigned = false, kOffset = true;
    static __m256i levels(const W& b) { return _mm256_or_si256(unpack_nibbles(b.qs), bit4_from_bits(b.qh)); }
};
struct Q8_0K {
    using W = block_q8_0;
    using A = block_q8_0;
    static constexpr bool kSigned = true, kOffset = false;
    static __m256i levels(const W& b) { return load32(b.qs); }
};
struct IQ4_NLK {
    using W = block_iq4_nl;
    using A = block_q8_0;
    static constexpr bool kSigned = true, kOffset = false;
    static __m256i levels(const W& b) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
        return _mm256_shuffle_epi8(table, unpack_nibbles(b.qs));
    }
};


// Eight fp16 values spaced `stride` bytes apart (lanes past `count` are 0) as floats. One
// dword gather: each fp16 sits in the low half of its dword (the high half is the next
// field of the same block, so nothing past the block is read).
inline __m256 gather_halves(const uint8_t* p, size_t stride, int count) {
    const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(static_cast<int>(stride)));
    __m256i g;
    if (count == 8) {
        g = _mm256_i32gather_epi32(reinterpret_cast<const int*>(p), idx, 1);
    } else {
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        g = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(p), idx, mask, 1);
    }
    g = _mm256_and_si256(g, _mm256_set1_epi32(0xFFFF));
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(g), _mm256_extracti128_si256(g, 1));
    return _mm256_cvtph_ps(packed);
}

// Fold 8 float lanes in halves (4, 2, 1), the scalar fold_lanes<8> order.
inline float fold8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
    return _mm_cvtss_f32(s);
}

// A weight block's scale as a float: its fp16 d, or the type's own (MXFP4's E8M0).
template <class K>
float block_scale(const typename K::W& b) {
    if constexpr (requires { K::scale(b); }) return K::scale(b);
    else return half_f32(b.d);
}

// Integer dots of blocks k and k+1 of one (weight row, activation row) pair, reduced by
// one hadd: lanes hold partial sums of both blocks.
template <class K>
inline __m256i pair_dot(const __m256i* q, const typename K::A* y, int k) {
    __m256i v0, v1;
    if constexpr (K::kSigned) {
        v0 = dot_s8(q[0], load32(y[k].qs));
        v1 = dot_s8(q[1], load32(y[k + 1].qs));
    } else {
        v0 = dot_u8(q[0], load32(y[k].qs));
        v1 = dot_u8(q[1], load32(y[k + 1].qs));
    }
    return _mm256_hadd_epi32(v0, v1);
}

// R weight rows x C activation rows of a 32-block type. Groups of 8 blocks: each block's
// integer dot goes to lane (block % 8) (a transposing hadd tree), then one fused
// multiply-add per group per output. A short last group is zero-padded: its empty lanes
// add 0 * 0, which leaves the accumulators' bits unchanged.
// wd / ad (optional): the blocks' d already as floats, wds / ads floats per row, zero past
// the last block up to a multiple of 8 (q32_gemm): the same values the gathers give.
template <class K, int R, int C>
void q32_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs,
              const float* wd = nullptr, size_t wds = 0, const float* ad = nullptr, size_t ads = 0) {
    using W = typename K::W;
    using A = typename K::A;
    const int64_t nb = n / 32;
    __m256 acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j) acc[r][j] = _mm256_setzero_ps();
    alignas(32) W wpad[R][8];
    alignas(32) A apad[C][8];
    for (int64_t g = 0; g < nb; g += 8) {
        const int count = static_cast<int>(nb - g < 8 ? nb - g : 8);
        const W* wr[R];
        const A* ar[C];
        for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const W*>(w + ws * r) + g;
        for (int j = 0; j < C; ++j) ar[j] = reinterpret_cast<const A*>(a + as * j) + g;
        if (count < 8) {  // copy the short group into zeroed blocks: one code path below
            for (int r = 0; r < R; ++r) {
                std::memset(wpad[r], 0, sizeof wpad[r]);
                std::memcpy(wpad[r], wr[r], sizeof(W) * static_cast<size_t>(count));
                wr[r] = wpad[r];
            }
            for (int j = 0; j < C; ++j) {
                std::memset(apad[j], 0, sizeof apad[j]);
                std::memcpy(apad[j], ar[j], sizeof(A) * static_cast<size_t>(count));
                ar[j] = apad[j];
            }
        }
        __m256i h[R][C][4];
        for (int p = 0; p < 4; ++p) {
            __m256i q[R][2];
            for (int r = 0; r < R; ++r) {
                q[r][0] = K::levels(wr[r][2 * p]);
                q[r][1] = K::levels(wr[r][2 * p + 1]);
            }
            for (int r = 0; r < R; ++r)
                for (int j = 0; j < C; ++j) h[r][j][p] = pair_dot<K>(q[r], ar[j], 2 * p);
        }
        __m256 dx[R], dy[C], mx[R], sy[C];
        for (int r = 0; r < R; ++r) {
            const auto* wb = reinterpret_cast<const uint8_t*>(wr[r]);
            if (wd) {
                dx[r] = _mm256_loadu_ps(wd + wds * r + g);
            } else if constexpr (requires { K::scale(wr[r][0]); }) {
                alignas(32) float d[8] = {};
                for (int k = 0; k < count; ++k) d[k] = K::scale(wr[r][k]);
                dx[r] = _mm256_load_ps(d);
            } else {
                dx[r] = gather_halves(wb + offsetof(W, d), sizeof(W), count);
            }
            if constexpr (K::kOffset) mx[r] = gather_halves(wb + offsetof(W, m), sizeof(W), count);
        }
        for (int j = 0; j < C; ++j) {
            const auto* ab = reinterpret_cast<const uint8_t*>(ar[j]);
            dy[j] = ad ? _mm256_loadu_ps(ad + ads * j + g) : gather_halves(ab + offsetof(A, d), sizeof(A), count);
            if constexpr (K::kOffset) sy[j] = gather_halves(ab + offsetof(A, s), sizeof(A), count);
        }
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < C; ++j) {
                const __m256i lo = _mm256_hadd_epi32(h[r][j][0], h[r][j][1]);
                const __m256i hi = _mm256_hadd_epi32(h[r][j][2], h[r][j][3]);
                const __m256i sums = _mm256_add_epi32(_mm256_permute2x128_si256(lo, hi, 0x20),
                                                      _mm256_permute2x128_si256(lo, hi, 0x31));
                acc[r][j] = _mm256_fmadd_ps(_mm256_mul_ps(dx[r], dy[j]), _mm256_cvtepi32_ps(sums), acc[r][j]);
                if constexpr (K::kOffset) acc[r][j] = _mm256_fmadd_ps(mx[r], sy[j], acc[r][j]);
            }
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j) c[cs * j + r] = fold8(acc[r][j]);
}

// ---------------------------------------------------------------- float rows

// 32 consecutive elements as floats, from F32, F16 or BF16 storage.
template <GgmlType T>
struct FloatRow;
template <>
struct FloatRow<GgmlType::F32> {
    using E = float;
    static __m256 load8(const E* p) { return _mm256_loadu_ps(p); }
#if POCKET_X86_ZMM
    static __m512 load16(const E* p) { return _mm512_loadu_ps(p); }
#endif
};
template <>
struct FloatRow<GgmlType::F16> {
    using E = uint16_t;
    static __m256 load8(const E* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
#if POCKET_X86_ZMM
    static __m512 load16(const E* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
#endif
};
template <>
struct FloatRow<GgmlType::BF16> {
    using E = uint16_t;
    static __m256 load8(const E* p) {
        const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
        return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    }
#if POCKET_X86_ZMM
    static __m512 load16(const E* p) {
        const __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
        return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
    }
#endif
};

// Accumulators of the 32 canonical lanes: 4 ymm (lanes 8k..8k+7), or 2 zmm.
struct Lanes32 {
#if POCKET_X86_ZMM
    __m512 v[2];
#else
    __m256 v[4];
#endif
};

template <class F>
inline void lanes_fma(Lanes32& acc, const typename F::E* x, const typename F::E* y) {
#if POCKET_X86_ZMM
    for (int h = 0; h < 2; ++h) acc.v[h] = _mm512_fmadd_ps(F::load16(x + 16 * h), F::load16(y + 16 * h), acc.v[h]);
#else
    for (int k = 0; k < 4; ++k) acc.v[k] = _mm256_fmadd_ps(F::load8(x + 8 * k), F::load8(y + 8 * k), acc.v[k]);
#endif
}

// The first lanes_fma on +0 lanes.
template <class F>
inline void lanes_fma_from_zero(Lanes32& acc, const typename F::E* x, const typename F::E* y) {
#if POCKET_X86_ZMM
    for (int h = 0; h < 2; ++h) acc.v[h] = _mm512_fmadd_ps(F::load16(x + 16 * h), F::load16(y + 16 * h), _mm512_setzero_ps());
#else
    for (int k = 0; k < 4; ++k) acc.v[k] = _mm256_fmadd_ps(F::load8(x + 8 * k), F::load8(y + 8 * k), _mm256_setzero_ps());
#endif
}

// fold_lanes<32>: lane k += lane k + h for h = 16, 8, 4, 2, 1.
inline float fold32(const Lanes32& acc) {
#if POCKET_X86_ZMM
    const __m512 s16 = _mm512_add_ps(acc.v[0], acc.v[1]);
    const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(s16), _mm512_extractf32x8_ps(s16, 1));
#else
    const __m256 s8 = _mm256_add_ps(_mm256_add_ps(acc.v[0], acc.v[2]), _mm256_add_ps(acc.v[1], acc.v[3]));
#endif
    return fold8(s8);
}

inline void lanes_zero(Lanes32& acc) {
#if POCKET_X86_ZMM
    acc.v[0] = acc.v[1] = _mm512_setzero_ps();
#else
    for (auto& v : acc.v) v = _mm256_setzero_ps();
#endif
}

template <GgmlType T, int R, int C, bool kTail>
void float_tile_of(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
    using F = FloatRow<T>;
    using E = typename F::E;
    // The lanes start at +0 and take fma(x, y, lane) from the first 32 elements on. The first
    // step is written out as fma(x, y, +0) rather than the lanes zeroed in memory first: GCC
    // turned that zeroing into a `rep stos` on every call (a fifth of the AVX2 attention score
    // tile's time, 64-long heads), and fma(x, y, +0) is the very step it replaces (not x * y,
    // which differs for a -0 product).
    Lanes32 acc[R][C];
    const int64_t full = n / 32 * 32;
    int64_t i0 = 0;
    if (full > 0) {
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < C; ++j)
                lanes_fma_from_zero<F>(acc[r][j], reinterpret_cast<const E*>(w + ws * r), reinterpret_cast<const E*>(a + as * j));
        i0 = 32;
    } else {
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < C; ++j) lanes_zero(acc[r][j]);
    }
    for (int64_t i = i0; i < full; i += 32)
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < C; ++j)
                lanes_fma<F>(acc[r][j], reinterpret_cast<const E*>(w + ws * r) + i, reinterpret_cast<const E*>(a + as * j) + i);
    if (kTail && full < n) {  // the tail, zero-padded to 32 lanes like the scalar reference
        E xt[R][32] = {}, yt[C][32] = {};
        for (int r = 0; r < R; ++r) std::memcpy(xt[r], reinterpret_cast<const E*>(w + ws * r) + full, sizeof(E) * (n - full));
        for (int j = 0; j < C; ++j) std::memcpy(yt[j], reinterpret_cast<const E*>(a + as * j) + full, sizeof(E) * (n - full));
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < C; ++j) lanes_fma<F>(acc[r][j], xt[r], yt[j]);
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j) c[cs * j + r] = fold32(acc[r][j]);
}

// Rows of whole 32-element steps apart: with the tail's padded copies in the same body, GCC
// kept the accumulators in memory and stored and reloaded all of them after the main loop
// (a 64-long head's dots are only two steps).
template <GgmlType T, int R, int C>
void float_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
    if (n % 32 == 0) float_tile_of<T, R, C, false>(n, w, ws, a, as, c, cs);
    else float_tile_of<T, R, C, true>(n, w, ws, a, as, c, cs);
}

// ---------------------------------------------------------------- K-quants

// Per super-block the scalar reference takes an exact integer isum (and, for types with
// mins, summ from Q8_K's bsums), then acc = fma(d, isum, acc); acc = fma(-dmin, summ, acc).
// Each type below gives its integer sums as 8 int32 partial sums (any order: exact); the
// tile reduces four columns' vectors at once and runs the two fused steps for the four
// columns in the lanes of one vector: lane j is exactly column j's scalar sequence.
// For types without mins (kMins false, no summ) the second step is fma(-0, 0, acc) = acc,
// so it is left out.

// acc += a * b as int16 pairs summed into int32 lanes (one instruction with VNNI).
inline __m256i madd_add(__m256i acc, __m256i a, __m256i b) {
#if POCKET_X86_VNNI
    return dpwssd(acc, a, b);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// 256 unsigned levels (32 per vector, in element order) with an int16 scale per pair of
// products: sum_k scale[k] . (q[k] x y[32k..32k+31]) as 8 int32 partial sums. maddubs
// cannot saturate: levels are < 64 and |y| <= 128. With AVX-512 the same sums run 64
// levels at a time from pairs joined once per super-block (the integers are exact in any order).
struct ScaledLevels {
    __m256i q[8], scale[8];
#if POCKET_X86_ZMM && POCKET_X86_VNNI
    __m512i q2[4], scale2[4];
    void join() {
        for (int m = 0; m < 4; ++m) {
            q2[m] = _mm512_inserti64x4(_mm512_castsi256_si512(q[2 * m]), q[2 * m + 1], 1);
            scale2[m] = _mm512_inserti64x4(_mm512_castsi256_si512(scale[2 * m]), scale[2 * m + 1], 1);
        }
    }
    __m256i dot(const block_q8_K& y) const {
        __m512i s = _mm512_setzero_si512();
        for (int m = 0; m < 4; ++m)
            s = _mm512_dpwssd_epi32(s, _mm512_maddubs_epi16(q2[m], _mm512_loadu_si512(y.qs + 64 * m)), scale2[m]);
        return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
    }
#else
    void join() {}
    __m256i dot(const block_q8_K& y) const {
        __m256i s = _mm256_setzero_si256();
        for (int k = 0; k < 8; ++k) {
            s = madd_add(s, _mm256_maddubs_epi16(q[k], load32(y.qs + 32 * k)), scale[k]);
            sum_in_order(s);
        }
        return s;
    }
#endif
};

// Q4_K / Q5_K: for 64-element chunk c, 32 low-nibble levels (sub-block 2c) and 32 high ones.
template <bool kQ5>
struct K45 {
    using W = std::conditional_t<kQ5, block_q5_K, block_q4_K>;
    static constexpr bool kMins = true;
    struct Prep {
        ScaledLevels lv;  // chunk c: low levels in q[2c], high in q[2c+1]; int16 sub-block scales
        __m256i mins;                      // min j in int16 lanes 2j and 2j+1, against bsums
    };
    // The 12 packed bytes -> 8 six-bit scales (bytes 0..7) and 8 mins (bytes 8..15), for
    // all sub-blocks at once: the same values as k4_scale_min(j) for j = 0..7.
    static __m128i scales_and_mins(const uint8_t* packed) {
        uint32_t u[3];
        std::memcpy(u, packed, 12);
        constexpr uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, top2 = 0x03030303;
        const uint32_t sc_lo = u[0] & low6;                                   // j < 4: s[j] & 63
        const uint32_t sc_hi = (u[2] & low4) | (((u[0] >> 6) & top2) << 4);   // s[j+4] & 15 | s[j-4] >> 6 << 4
        const uint32_t m_lo = u[1] & low6;                                    // s[j+4] & 63
        const uint32_t m_hi = ((u[2] >> 4) & low4) | (((u[1] >> 6) & top2) << 4);  // s[j+4] >> 4 | s[j] >> 6 << 4
        return _mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), static_cast<int>(m_lo), static_cast<int>(m_hi));
    }
    static __m256i scales16(__m128i sm) { return _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm)); }  // both halves
    static __m256i min_pairs(__m128i sm) {  // min j in int16 lanes 2j and 2j+1
        const __m256i m32 = _mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8));
        return _mm256_or_si256(m32, _mm256_slli_epi32(m32, 16));
    }
    // int16 element j (sub-block j's scale) of sc16, in every lane
    static __m256i scale_of(__m256i sc16, int j) {
        return _mm256_shuffle_epi8(sc16, _mm256_set1_epi16(static_cast<short>(((2 * j + 1) << 8) | (2 * j))));
    }
    static __m256i high_bits(const W& b) {
        if constexpr (kQ5) return load32(b.qh);
        else return _mm256_setzero_si256();
    }
    // 64-element chunk ch: the levels of sub-blocks 2ch (lo) and 2ch+1 (hi)
    static void chunk_levels(const W& b, __m256i hbits, int ch, __m256i& lo, __m256i& hi) {
        const __m256i q = load32(b.qs + 32 * ch);
        lo = _mm256_and_si256(q, _mm256_set1_epi8(0x0F));
        hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), _mm256_set1_epi8(0x0F));
        if constexpr (kQ5) {
            const __m256i one = _mm256_set1_epi8(1);
            lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 2 * ch), one), 4));
            hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hbits, 2 * ch + 1), one), 4));
        }
    }
    static void prep(const W& b, Prep& p) {
        const __m128i sm = scales_and_mins(b.scales);
        const __m256i sc16 = scales16(sm), hbits = high_bits(b);
        p.mins = min_pairs(sm);
        for (int ch = 0; ch < 4; ++ch) {
            chunk_levels(b, hbits, ch, p.lv.q[2 * ch], p.lv.q[2 * ch + 1]);
            p.lv.scale[2 * ch] = scale_of(sc16, 2 * ch);
            p.lv.scale[2 * ch + 1] = scale_of(sc16, 2 * ch + 1);
        }
        p.lv.join();
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) { return p.lv.dot(y); }
    // sum_j mins[j] * (bsums[2j] + bsums[2j+1])
    static __m256i summ(const Prep& p, const block_q8_K& y) { return _mm256_madd_epi16(p.mins, load32(y.bsums)); }
#if !POCKET_X86_ZMM
    // Decoding (one column) on ymm: isum and summ as above, each level vector multiplied as
    // soon as it is built rather than kept in a Prep.
    static void sums1(const W& b, const block_q8_K& y, __m256i& isum_out, __m256i& summ_out) {
        const __m128i sm = scales_and_mins(b.scales);
        const __m256i sc16 = scales16(sm), hbits = high_bits(b);
        summ_out = _mm256_madd_epi16(min_pairs(sm), load32(y.bsums));
        __m256i s = _mm256_setzero_si256();
        for (int ch = 0; ch < 4; ++ch) {
            __m256i lo, hi;
            chunk_levels(b, hbits, ch, lo, hi);
            s = madd_add(s, _mm256_maddubs_epi16(lo, load32(y.qs + 64 * ch)), scale_of(sc16, 2 * ch));
            s = madd_add(s, _mm256_maddubs_epi16(hi, load32(y.qs + 64 * ch + 32)), scale_of(sc16, 2 * ch + 1));
        }
        isum_out = s;
    }
#endif
};

// Sixteen int16 scales (one per 16 elements) -> level vector k's (elements 32k..32k+31):
// 8 int16 lanes of scale 2k, then 8 of scale 2k+1.
inline __m256i scale_pair_of(__m256i scales, int k) {
    const __m256i group = k < 4 ? _mm256_permute2x128_si256(scales, scales, 0x00)   // scales 0..7 in both halves
                                : _mm256_permute2x128_si256(scales, scales, 0x11);  // scales 8..15 in both halves
    const int e = 4 * (k % 4);  // byte offset of int16 scale 2k within its group of eight
    return _mm256_shuffle_epi8(group, _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(((e + 3) << 8) | (e + 2))),
                                                       _mm_set1_epi16(static_cast<short>(((e + 1) << 8) | e))));
}

struct K6 {
    using W = block_q6_K;
    static constexpr bool kMins = false;
    struct Prep {
        ScaledLevels lv;   // levels 0..63; int16 scales: 8 lanes of scale 2k, then 8 of scale 2k+1
        __m256i scales32;  // the 16 scales as int16 times 32, for the -32 offset through bsums
    };
    // Half h (128 elements): the levels of its quarters (32 elements each) into q[0..3]
    static void half_levels(const W& b, int h, __m256i* q) {
        const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(3);
        const __m256i l0 = load32(b.ql + 64 * h), l1 = load32(b.ql + 64 * h + 32), qh = load32(b.qh + 32 * h);
        const __m256i lows[4] = {_mm256_and_si256(l0, m4), _mm256_and_si256(l1, m4),
                                 _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                 _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4)};
        for (int quarter = 0; quarter < 4; ++quarter) {
            const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * quarter), m2);
            q[quarter] = _mm256_or_si256(lows[quarter], _mm256_slli_epi16(high, 4));
        }
    }
    static __m256i scales16(const W& b) { return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales))); }
    static void prep(const W& b, Prep& p) {
        for (int h = 0; h < 2; ++h) half_levels(b, h, p.lv.q + 4 * h);
        const __m256i scales = scales16(b);
        p.scales32 = _mm256_slli_epi16(scales, 5);  // |scale| <= 128: 32 * scale fits int16
        for (int k = 0; k < 8; ++k) p.lv.scale[k] = scale_pair_of(scales, k);
        p.lv.join();
    }
    // (q - 32) * y summed with the scales = sum of scale * q * y - 32 * sum_g scale[g] * bsums[g], exactly
    static __m256i isum(const Prep& p, const block_q8_K& y) {
        return _mm256_sub_epi32(p.lv.dot(y), _mm256_madd_epi16(p.scales32, load32(y.bsums)));
    }
#if !POCKET_X86_ZMM
    // Decoding (one column) on ymm: the same sums, each half's level vectors multiplied as soon
    // as they are built rather than kept in a Prep (16 vectors: more than the registers). No
    // mins: summ is left alone.
    static void sums1(const W& b, const block_q8_K& y, __m256i& isum_out, __m256i&) {
        const __m256i scales = scales16(b);
        __m256i s = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            __m256i q[4];
            half_levels(b, h, q);
            for (int quarter = 0; quarter < 4; ++quarter) {
                const int k = 4 * h + quarter;
                s = madd_add(s, _mm256_maddubs_epi16(q[quarter], load32(y.qs + 32 * k)), scale_pair_of(scales, k));
            }
        }
        isum_out = _mm256_sub_epi32(s, _mm256_madd_epi16(_mm256_slli_epi16(scales, 5), load32(y.bsums)));
    }
#endif
};

// Two 16-element groups' scales as int16 lanes: 8 of `a` (low 128 bits), 8 of `b`.
inline __m256i scale_pair(int a, int b) {
    return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(b)), _mm_set1_epi16(static_cast<int16_t>(a)));
}

// Q2_K and Q3_K share a layout: for half h (128 elements) and shift s, the 32 levels
// (qs[32h..] >> s) & 3 are groups 8h+s and 8h+s+1, i.e. elements 128h+16s .. +31.
struct K2 {
    using W = block_q2_K;
    static constexpr bool kMins = true;
    struct Prep {
        ScaledLevels lv;   // levels 0..3; low nibbles of the scales, as int16 pairs
        __m256i mins;      // the 16 mins (high nibbles) as int16, against bsums
    };
    // Level vector k = 4h + s (half h, shift s)
    static __m256i levels(__m256i qs_half, int s) { return _mm256_and_si256(_mm256_srli_epi16(qs_half, 2 * s), _mm256_set1_epi8(3)); }
    static __m128i packed(const W& b) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales)); }
    static __m256i scales16(__m128i sc) { return _mm256_cvtepu8_epi16(_mm_and_si128(sc, _mm_set1_epi8(0x0F))); }
    static __m256i mins16(__m128i sc) { return _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), _mm_set1_epi8(0x0F))); }
    static void prep(const W& b, Prep& p) {
        const __m256i scales = scales16(packed(b));
        for (int h = 0; h < 2; ++h) {
            const __m256i q = load32(b.qs + 32 * h);
            for (int s = 0; s < 4; ++s) {
                p.lv.q[4 * h + s] = levels(q, s);
                p.lv.scale[4 * h + s] = scale_pair_of(scales, 4 * h + s);
            }
        }
        p.lv.join();
        p.mins = mins16(packed(b));
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) {
        return p.lv.dot(y);
    }
    static __m256i summ(const Prep& p, const block_q8_K& y) { return _mm256_madd_epi16(p.mins, load32(y.bsums)); }
    // Decoding (one column) on ymm: each level vector multiplied as soon as it is built
    // rather than kept in a Prep (18 vectors: more than the registers).
    static void sums1(const W& b, const block_q8_K& y, __m256i& isum_out, __m256i& summ_out) {
        const __m128i sc = packed(b);
        const __m256i scales = scales16(sc);
        summ_out = _mm256_madd_epi16(mins16(sc), load32(y.bsums));
        __m256i sum = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i q = load32(b.qs + 32 * h);
            for (int s = 0; s < 4; ++s) {
                const int k = 4 * h + s;
                sum = madd_add(sum, _mm256_maddubs_epi16(levels(q, s), load32(y.qs + 32 * k)), scale_pair_of(scales, k));
            }
        }
        isum_out = sum;
    }
};

struct K3 {
    using W = block_q3_K;
    static constexpr bool kMins = false;
    struct Prep {
        ScaledLevels lv;   // level + 4, i.e. 0..7; group scales as int16 pairs
        __m256i scales4;   // 4 x the 16 group scales, for the -4 through bsums
    };
    // Level vector k = 4h + s: level + 4 (0..7) from shift s of half h's qs and hmask bit k
    // (set means the level has no -4)
    static __m256i levels(__m256i qs_half, __m256i hm, int h, int s) {
        const __m256i low = _mm256_and_si256(_mm256_srli_epi16(qs_half, 2 * s), _mm256_set1_epi8(3));
        const __m256i hbit = _mm256_and_si256(_mm256_srli_epi16(hm, 4 * h + s), _mm256_set1_epi8(1));
        return _mm256_or_si256(low, _mm256_slli_epi16(hbit, 2));
    }
    // The 16 six-bit scales minus 32 as int16 (q3k_scale's values): scale j's low nibble is
    // byte j % 8's low (j < 8) or high nibble; its top two bits are bits 2 (j / 4) of byte
    // 8 + j % 4, brought down by a shift of each 32-bit lane (bytes 4i..4i+3 by 2i).
    static __m256i scales16(const W& b) {
        uint64_t lows;
        uint32_t highs;
        std::memcpy(&lows, b.scales, 8);
        std::memcpy(&highs, b.scales + 8, 4);
        const __m128i m4 = _mm_set1_epi8(0x0F), l = _mm_cvtsi64_si128(static_cast<long long>(lows));
        const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(l, m4), _mm_and_si128(_mm_srli_epi16(l, 4), m4));
        const __m128i h = _mm_srlv_epi32(_mm_set1_epi32(static_cast<int>(highs)), _mm_setr_epi32(0, 2, 4, 6));
        const __m128i high = _mm_and_si128(h, _mm_set1_epi8(3));
        return _mm256_cvtepi8_epi16(_mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32)));
    }
    static void prep(const W& b, Prep& p) {
        const __m256i hm = load32(b.hmask), scales = scales16(b);
        for (int h = 0; h < 2; ++h) {
            const __m256i q = load32(b.qs + 32 * h);
            for (int s = 0; s < 4; ++s) {
                p.lv.q[4 * h + s] = levels(q, hm, h, s);
                p.lv.scale[4 * h + s] = scale_pair_of(scales, 4 * h + s);
            }
        }
        p.scales4 = _mm256_slli_epi16(scales, 2);  // |scale| <= 32: 4 * scale fits int16
        p.lv.join();
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) {
        // (level + 4 - 4) * y with the scales = the levels' sum - 4 * sum_g scale[g] * bsums[g], exactly
        return _mm256_sub_epi32(p.lv.dot(y), _mm256_madd_epi16(p.scales4, load32(y.bsums)));
    }
    // Decoding (one column) on ymm: each level vector multiplied as soon as it is built
    // rather than kept in a Prep (17 vectors). No mins: summ is left alone.
    static void sums1(const W& b, const block_q8_K& y, __m256i& isum_out, __m256i&) {
        const __m256i hm = load32(b.hmask), scales = scales16(b);
        __m256i sum = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i q = load32(b.qs + 32 * h);
            for (int s = 0; s < 4; ++s) {
                const int k = 4 * h + s;
                sum = madd_add(sum, _mm256_maddubs_epi16(levels(q, hm, h, s), load32(y.qs + 32 * k)), scale_pair_of(scales, k));
            }
        }
        isum_out = _mm256_sub_epi32(sum, _mm256_madd_epi16(_mm256_slli_epi16(scales, 2), load32(y.bsums)));
    }
};

struct KXS {
    using W = block_iq4_xs;
    static constexpr bool kMins = false;
    struct Prep {
        __m256i absq[8], q[8];  // |level| and level, per 32-element sub-block
        __m256i scale[8];
    };
    static void prep(const W& b, Prep& p) {
        const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4nlValues)));
        for (int ib = 0; ib < 8; ++ib) {
            p.q[ib] = _mm256_shuffle_epi8(table, unpack_nibbles(b.qs + 16 * ib));
            p.absq[ib] = _mm256_sign_epi8(p.q[ib], p.q[ib]);
            p.scale[ib] = _mm256_set1_epi16(static_cast<int16_t>(iq4xs_scale(ib, b)));
        }
    }
    static __m256i isum(const Prep& p, const block_q8_K& y) {
        __m256i s = _mm256_setzero_si256();
        for (int ib = 0; ib < 8; ++ib) {
            const __m256i sy = _mm256_sign_epi8(load32(y.qs + 32 * ib), p.q[ib]);
            s = madd_add(s, _mm256_maddubs_epi16(p.absq[ib], sy), p.scale[ib]);
            sum_in_order(s);
        }
        return s;
    }
};

// The sums of four int32 vectors' lanes, in one vector (lane j = sum of v[j]).
inline __m128i hsum4_i32(const __m256i (&v)[4]) {
    const __m256i abcd = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
    return _mm_add_epi32(_mm256_castsi256_si128(abcd), _mm256_extracti128_si256(abcd, 1));
}

// Lane j: the sum of v[j]'s lanes. One column (decoding) needs one plain sum, not the four.
template <int C>
inline __m128i column_sums(const __m256i (&v)[4]) {
    if constexpr (C == 1) return _mm_cvtsi32_si128(hsum_i32(v[0]));
    else return hsum4_i32(v);
}

// The super-block's fp16 d (IQ1_M spreads it over its scales), and the type's constant factor
// (the i-quants' 1/8, 1/4: applied once at the end, as the scalar reference does).
template <class K>
uint16_t kquant_d_bits(const typename K::W& b) {
    if constexpr (requires { K::d_bits(b); }) return K::d_bits(b);
    else return b.d;
}
template <class K>
float kquant_factor(float v) {
    if constexpr (requires { K::kFactor; }) return v * K::kFactor;
    else return v;
}

// Types whose one-column integer sums come straight from the bits (ymm decoding)
template <class K>
concept HasSums1 = requires(const typename K::W& b, const block_q8_K& y, __m256i& v) { K::sums1(b, y, v, v); };

// Decoding with sums1: one weight row x one activation column, the scalar steps on floats in
// lane 0. Kept apart from kquant_tile so that the accumulator and y.d stay in registers: in
// the tile's general form GCC kept a one-column accumulator on the stack and loaded y.d
// through a store it could not forward (AVX2 Q2_K tg64 ~27 -> ~31 t/s). Rows in the lanes of
// one vector (four rows' sums reduced together) measured no faster; types decoded through a
// Prep (the i-quants) measured slower here (IQ4_XS ~9%), so they keep the tile.
template <HasSums1 K>
void kquant_column(int64_t n, const uint8_t* w, const block_q8_K* y, float* c) {
    using W = typename K::W;
    __m128 acc = _mm_setzero_ps();
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const W& b = reinterpret_cast<const W*>(w)[i];
        __m256i is = _mm256_setzero_si256(), sm = _mm256_setzero_si256();
        K::sums1(b, y[i], is, sm);
        // y.d * d(x), fma(d, isum, acc), then fma(-dmin, summ, acc): the scalar steps
        const __m128 yd = _mm_set1_ps(y[i].d);
        const __m128 xd = _mm_cvtph_ps(_mm_cvtsi32_si128(kquant_d_bits<K>(b)));
        acc = _mm_fmadd_ps(_mm_mul_ps(yd, xd), _mm_cvtepi32_ps(_mm_cvtsi32_si128(hsum_i32(is))), acc);
        if constexpr (K::kMins) {
            const __m128 xdmin = _mm_cvtph_ps(_mm_cvtsi32_si128(b.dmin));
            acc = _mm_fnmadd_ps(_mm_mul_ps(yd, xdmin), _mm_cvtepi32_ps(_mm_cvtsi32_si128(hsum_i32(sm))), acc);
        }
    }
    *c = kquant_factor<K>(_mm_cvtss_f32(acc));
}

// R weight rows x C activation columns, in groups of four columns: column 4g + j of a row
// lives in lane j of acc[r][g], so the integer sums of four columns reduce together and
// their scalar steps run as one vector op each, lane by lane the scalar sequence. Lanes
// past C see zero sums and a zero scale and are never stored.
template <class K, int R, int C>
void kquant_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
    if constexpr (C == 1 && R == 1 && HasSums1<K>) {
        kquant_column<K>(n, w, reinterpret_cast<const block_q8_K*>(a), c);
        return;
    }
    constexpr int G = (C + 3) / 4;
    using W = typename K::W;
    __m128 acc[R][G];
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < G; ++g) acc[r][g] = _mm_setzero_ps();
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const block_q8_K* y[C];
        alignas(16) float yd[4 * G] = {};
        for (int j = 0; j < C; ++j) {
            y[j] = reinterpret_cast<const block_q8_K*>(a + as * j) + i;
            yd[j] = y[j]->d;
        }
        for (int r = 0; r < R; ++r) {
            const W& b = reinterpret_cast<const W*>(w + ws * r)[i];
            typename K::Prep prep;
            K::prep(b, prep);
            const __m128 xd = _mm_set1_ps(half_f32(kquant_d_bits<K>(b)));
            for (int g = 0; g < G; ++g) {
                __m256i is[4] = {}, sm[4] = {};
                for (int j = 0; j < 4 && 4 * g + j < C; ++j) {
                    is[j] = K::isum(prep, *y[4 * g + j]);
                    if constexpr (K::kMins) sm[j] = K::summ(prep, *y[4 * g + j]);
                }
                // y.d * d(x), fma(d, isum, acc), then fma(-dmin, summ, acc): the scalar steps
                const __m128 yd4 = _mm_load_ps(yd + 4 * g);
                acc[r][g] = _mm_fmadd_ps(_mm_mul_ps(yd4, xd), _mm_cvtepi32_ps(column_sums<C>(is)), acc[r][g]);
                if constexpr (K::kMins) {
                    const __m128 dmin = _mm_mul_ps(yd4, _mm_set1_ps(half_f32(b.dmin)));
                    acc[r][g] = _mm_fnmadd_ps(dmin, _mm_cvtepi32_ps(column_sums<C>(sm)), acc[r][g]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r) {
        alignas(16) float out[4 * G];
        for (int g = 0; g < G; ++g) _mm_store_ps(out + 4 * g, acc[r][g]);
        for (int j = 0; j < C; ++j) c[cs * j + r] = kquant_factor<K>(out[j]);
    }
}

// ---------------------------------------------------------------- Q8_0 quantization

// The largest of eight floats.
inline float hmax_ps(__m256 m) {
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_movehdup_ps(h));
    return _mm_cvtss_f32(h);
}

// 32 levels in -127..127 (four vectors of int32, in order) stored as int8: the saturating
// packs keep them and interleave 128-bit lanes; the permute restores the order.
inline void store_levels32(const __m256i q[4], int8_t* out) {
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// The scalar reference's bits (quantize_legacy.cpp): d = amax / 127, each x * (1/d) rounded
// half away from zero, as std::round does. SIMD rounds to nearest even, so the rounding is
// built from a truncation and the exact remainder. Activations of every Q4_0 / Q8_0 product
// pass through here, once per row of a prompt.
void quantize_row_q8_0_simd(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q8_0*>(vy);
    const __m256 sign = _mm256_set1_ps(-0.0f), half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        __m256 v[4];
        for (int k = 0; k < 4; ++k) v[k] = _mm256_loadu_ps(x + 8 * k);
        const __m256 m = _mm256_max_ps(_mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                                       _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])));
        const float amax = hmax_ps(m);
        const float d = amax / 127;
        const float id = d != 0 ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int k = 0; k < 4; ++k) {
            const __m256 p = _mm256_mul_ps(v[k], vid);
            const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
            const __m256 away = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(p, t)), half, _CMP_GE_OQ);
            const __m256 step = _mm256_and_ps(away, _mm256_or_ps(one, _mm256_and_ps(sign, p)));  // +-1 where |frac| >= 0.5
            q[k] = _mm256_cvttps_epi32(_mm256_add_ps(t, step));
        }
        store_levels32(q, y[i].qs);
    }
}

// ---------------------------------------------------------------- Q8_K quantization

// The scalar reference's bits (quantize_legacy.cpp), for finite x: the signed value of the
// first element of largest magnitude sets iscale = -127 / max; each level is
// nearest_int(iscale * x) by the same magic-number addition (no fused multiply-add), capped
// at 127; bsums are exact. The activations of every K-quant and IQ4_XS product pass through
// here; with one row (decoding) a single thread does it while the others wait.
void quantize_row_q8_K_simd(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<block_q8_K*>(vy);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int64_t i = 0; i < n / kQKK; ++i, x += kQKK) {
        __m256 m = _mm256_setzero_ps();
        for (int k = 0; k < kQKK / 8; ++k) m = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * k)), m);  // NaN skipped
        const float amax = hmax_ps(m);
        if (amax == 0) {
            std::memset(&y[i], 0, sizeof(block_q8_K));
            continue;
        }
        float max = amax;
        const __m256 va = _mm256_set1_ps(amax);
        for (int k = 0; k < kQKK / 8; ++k) {
            const int hit = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + 8 * k)), va, _CMP_EQ_OQ));
            if (hit) {
                max = x[8 * k + __builtin_ctz(static_cast<unsigned>(hit))];
                break;
            }
        }
        const float iscale = -127.f / max;
        const __m256 vs = _mm256_set1_ps(iscale), magic = _mm256_set1_ps(12582912.f);
        const __m256i mant = _mm256_set1_epi32(0x007FFFFF), bias = _mm256_set1_epi32(0x00400000), top = _mm256_set1_epi32(127);
        for (int g = 0; g < kQKK / 32; ++g) {
            __m256i q[4];
            for (int k = 0; k < 4; ++k) {
                const __m256 biased = _mm256_add_ps(_mm256_mul_ps(vs, _mm256_loadu_ps(x + 32 * g + 8 * k)), magic);
                q[k] = _mm256_min_epi32(_mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(biased), mant), bias), top);
            }
            y[i].bsums[2 * g] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[0], q[1])));
            y[i].bsums[2 * g + 1] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(q[2], q[3])));
            store_levels32(q, y[i].qs + 32 * g);
        }
        y[i].d = 1 / iscale;
    }
}

// ---------------------------------------------------------------- repacked Q4_0 and Q8_0 (8 rows)

// Rows in lanes: lane r of the result is the exact integer dot of row r's block with the
// activation block (levels taken unsigned 0..15, the -8 applied through sum(y)). Chunk k of
// the record holds elements 4k..4k+3 (low nibbles) and 16+4k.. (high) of every row, one row
// per 32-bit lane, so each multiply-add takes four activation bytes broadcast to all lanes.
struct Q4_0x8Levels {
    __m256i lo[4], hi[4];  // chunk k: row r's four levels in lane r
};

inline void q4_0x8_levels(const block_q4_0x8& x, Q4_0x8Levels& L) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int k = 0; k < 4; ++k) {
        const __m256i q = load32(x.qs[k]);
        L.lo[k] = _mm256_and_si256(q, m4);
        L.hi[k] = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
    }
}

inline __m256i broadcast4(const int8_t* p) { return _mm256_set1_epi32(dword_at(p)); }

#if POCKET_X86_ZMM
// Decoding in 512-bit registers, still one stream: a 64-byte load takes two chunks of a record
// (chunk k in lanes 0-7, chunk k + 1 in lanes 8-15), multiplied by the activation's dwords k
// and k + 1 spread over the same halves; the halves' integer sums are added at the end (exact,
// so the bits are the ymm path's). pocket_kernels_bench gemv_repacked/q4_0/avx512 (2 MiB pages)
// from L2 37 -> 55 GB/s, from memory 31 -> 34 (median of 10). Two records side by side (16 rows,
// the activation dword broadcast) need fewer instructions still, but as two streams of records
// they measured slower from memory (28), and so did spreading the activations once per call
// (256 bytes a block: loads that miss L1 beside the weights'). Used by the nibble types (Q4_0,
// IQ4_XS, Q4_K, Q5_K); Q8_0's GEMV, with no nibbles to unpack, already reads at the memory's
// rate and decoded 3% slower this way.
struct ActPairs {
    __m512i a[4];  // a[i]: the block's dword 2i in lanes 0-7, dword 2i + 1 in lanes 8-15
};
inline ActPairs act_pairs(const int8_t* qs32) {  // 32 activation bytes
    const __m512i v = _mm512_zextsi256_si512(load32(qs32));
    ActPairs A;
    for (int i = 0; i < 4; ++i)
        A.a[i] = _mm512_permutexvar_epi32(_mm512_inserti64x4(_mm512_set1_epi32(2 * i), _mm256_set1_epi32(2 * i + 1), 1), v);
    return A;
}
inline __m256i add_halves(__m512i s) {
    return _mm256_add_epi32(_mm512_castsi512_si256(s), _mm512_extracti64x4_epi64(s, 1));
}
// init + the eight rows' sums over four chunks of nibbles (128 bytes at qs: the low nibbles
// against the activation's dwords 0-3, the high against 4-7), each nibble mapped by `level`
// to the unsigned level multiplied (Q4_0: itself; IQ4_XS: its table).
template <class Level>
inline __m256i nibble_pair_sums(const uint8_t* qs, const ActPairs& A, __m256i init, Level level) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i q01 = _mm512_loadu_si512(qs), q23 = _mm512_loadu_si512(qs + 64);
    __m512i P = _mm512_dpbusd_epi32(_mm512_zextsi256_si512(init), level(_mm512_and_si512(q01, m4)), A.a[0]);
    __m512i Q = _mm512_dpbusd_epi32(_mm512_setzero_si512(), level(_mm512_and_si512(_mm512_srli_epi16(q01, 4), m4)), A.a[2]);
    P = _mm512_dpbusd_epi32(P, level(_mm512_and_si512(q23, m4)), A.a[1]);
    Q = _mm512_dpbusd_epi32(Q, level(_mm512_and_si512(_mm512_srli_epi16(q23, 4), m4)), A.a[3]);
    return add_halves(_mm512_add_epi32(P, Q));
}
#endif

// init + the eight rows' dots of the unsigned levels with y: init = -8 * sum(y) gives the
// dots of the signed levels.
inline __m256i q4_0x8_sums_from(const Q4_0x8Levels& L, const block_q8_0& y, __m256i init) {
#if POCKET_X86_VNNI
    __m256i P = init;
    for (int k = 0; k < 4; ++k) {
        P = dpbusd(P, L.lo[k], broadcast4(y.qs + 4 * k));
        P = dpbusd(P, L.hi[k], broadcast4(y.qs + 16 + 4 * k));
    }
    return P;
#else
    // Pairs of products in 16 bits: |15 * 128 * 2| per term, eight terms stay below 2^15.
    __m256i S = _mm256_setzero_si256();
    for (int k = 0; k < 4; ++k) {
        S = _mm256_add_epi16(S, _mm256_maddubs_epi16(L.lo[k], broadcast4(y.qs + 4 * k)));
        S = _mm256_add_epi16(S, _mm256_maddubs_epi16(L.hi[k], broadcast4(y.qs + 16 + 4 * k)));
    }
    return _mm256_add_epi32(init, _mm256_madd_epi16(S, _mm256_set1_epi16(1)));
#endif
}

// The interleaved 32-blocks, as policies of the group kernels below: Block is the 8-row
// record, levels() unpacks it once per record, sums() gives the eight rows' exact integer
// dots with one activation block in their lanes (levels16/sums16: two records, 16 rows).
struct Q4_0x8P {
    using Block = block_q4_0x8;
    using Levels = Q4_0x8Levels;
    static constexpr int32_t kOffset = 8;  // the levels are stored +8
    static void levels(const Block& x, Levels& L) { q4_0x8_levels(x, L); }
    static __m256i sums_from(const Levels& L, const block_q8_0& y, __m256i init) { return q4_0x8_sums_from(L, y, init); }
#if !POCKET_X86_VNNI
    // Prompts without VNNI: the eight level registers, C columns' sums and accumulators do not
    // fit in 16 ymm (GCC computed all 32 products of a record first and spilled them), so a
    // record is taken one half at a time, low nibbles (part 0) then high (part 1), each added
    // to the columns' 16-bit sums S[j] (the integer sums are exact: no bit changes).
    static constexpr bool kHalves = true;
    template <int C>
    static void add_half_sums(const Block& x, int part, const block_q8_0* const* y, int64_t b, __m256i* S) {
        const __m256i m4 = _mm256_set1_epi8(0x0F);
        __m256i h[4];
        for (int k = 0; k < 4; ++k) h[k] = _mm256_and_si256(part ? _mm256_srli_epi16(load32(x.qs[k]), 4) : load32(x.qs[k]), m4);
        for (int j = 0; j < C; ++j) {
            const int8_t* q = y[j][b].qs + 16 * part;
            __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(h[0], broadcast4(q)), _mm256_maddubs_epi16(h[1], broadcast4(q + 4)));
            s = _mm256_add_epi16(s, _mm256_add_epi16(_mm256_maddubs_epi16(h[2], broadcast4(q + 8)),
                                                     _mm256_maddubs_epi16(h[3], broadcast4(q + 12))));
            S[j] = part ? _mm256_add_epi16(S[j], s) : s;
            sum_in_order(S[j]);
        }
    }
    static __m256i half_sums_total(__m256i S) { return _mm256_madd_epi16(S, _mm256_set1_epi16(1)); }
#endif
#if POCKET_X86_ZMM
    static __m256i pair_sums(const Block& x, const ActPairs& A, __m256i init) {
        return nibble_pair_sums(&x.qs[0][0][0], A, init, [](__m512i v) { return v; });
    }
#endif
#if POCKET_X86_ZMM
    struct Levels16 {
        __m512i lo[4], hi[4];
    };
    static void levels16(const Block& x0, const Block& x1, Levels16& L) {
        const __m512i m4 = _mm512_set1_epi8(0x0F);
        for (int q = 0; q < 4; ++q) {
            const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(load32(x0.qs[q])), load32(x1.qs[q]), 1);
            L.lo[q] = _mm512_and_si512(v, m4);
            L.hi[q] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        }
    }
    static __m512i sums16_from(const Levels16& L, const block_q8_0& y, __m512i init) {
        __m512i P = init, Q = _mm512_setzero_si512();  // two chains: half the latency
        for (int q = 0; q < 4; ++q) {
            P = _mm512_dpbusd_epi32(P, L.lo[q], _mm512_set1_epi32(dword_at(y.qs + 4 * q)));
            Q = _mm512_dpbusd_epi32(Q, L.hi[q], _mm512_set1_epi32(dword_at(y.qs + 16 + 4 * q)));
        }
        return _mm512_add_epi32(P, Q);
    }
#endif
};

// Q8_0: with VNNI the signed levels are flipped to unsigned (w ^ 0x80 = w + 128) for the
// unsigned-by-signed multiply-add, and the +128 taken back through sum(y); without, the
// products go through the sign trick of dot_s8.
struct Q8_0x8P {
    using Block = block_q8_0x8;
    struct Levels {
        __m256i q[8];  // chunk k: row r's elements 4k..4k+3 in lane r
    };
    static void levels(const Block& x, Levels& L) {
        for (int k = 0; k < 8; ++k) {
            L.q[k] = load32(x.qs[k]);
#if POCKET_X86_VNNI
            L.q[k] = _mm256_xor_si256(L.q[k], _mm256_set1_epi8(static_cast<char>(0x80)));
#endif
        }
    }
    static constexpr int32_t kOffset = POCKET_X86_VNNI ? 128 : 0;  // the flipped levels are +128
#if !POCKET_X86_VNNI
    // Prompts without VNNI, as Q4_0x8P: chunks 0-3 (part 0), then 4-7, so that the magnitudes
    // of four chunks, not eight, stay in registers beside the columns' int32 sums.
    static constexpr bool kHalves = true;
    template <int C>
    static void add_half_sums(const Block& x, int part, const block_q8_0* const* y, int64_t b, __m256i* S) {
        __m256i aw[4];
        for (int k = 0; k < 4; ++k) aw[k] = _mm256_sign_epi8(load32(x.qs[4 * part + k]), load32(x.qs[4 * part + k]));
        for (int j = 0; j < C; ++j) {
            const int8_t* q = y[j][b].qs + 16 * part;
            __m256i s = part ? S[j] : _mm256_setzero_si256();
            for (int k = 0; k < 4; ++k) {
                const __m256i sy = _mm256_sign_epi8(broadcast4(q + 4 * k), load32(x.qs[4 * part + k]));
                s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(aw[k], sy), _mm256_set1_epi16(1)));
            }
            S[j] = s;
            sum_in_order(S[j]);
        }
    }
    static __m256i half_sums_total(__m256i S) { return S; }
#endif
    static __m256i sums_from(const Levels& L, const block_q8_0& y, __m256i init) {
        __m256i P = init;
#if POCKET_X86_VNNI
        for (int k = 0; k < 8; ++k) P = dpbusd(P, L.q[k], broadcast4(y.qs + 4 * k));
#else
        for (int k = 0; k < 8; ++k) P = _mm256_add_epi32(P, dot_s8(L.q[k], broadcast4(y.qs + 4 * k)));
#endif
        return P;
    }
#if POCKET_X86_ZMM
    struct Levels16 {
        __m512i q[8];
    };
    static void levels16(const Block& x0, const Block& x1, Levels16& L) {
        for (int k = 0; k < 8; ++k)
            L.q[k] = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(load32(x0.qs[k])), load32(x1.qs[k]), 1),
                                      _mm512_set1_epi8(static_cast<char>(0x80)));
    }
    static __m512i sums16_from(const Levels16& L, const block_q8_0& y, __m512i init) {
        __m512i P = init, Q = _mm512_setzero_si512();  // two chains: half the latency
        for (int k = 0; k < 8; k += 2) {
            P = _mm512_dpbusd_epi32(P, L.q[k], _mm512_set1_epi32(dword_at(y.qs + 4 * k)));
            Q = _mm512_dpbusd_epi32(Q, L.q[k + 1], _mm512_set1_epi32(dword_at(y.qs + 4 * k + 4)));
        }
        return _mm512_add_epi32(P, Q);
    }
#endif
};

// Decoding (one activation column) reads each weight byte once and is limited by how fast
// they arrive: the hardware prefetcher alone left the repacked GEMVs waiting on their loads
// (perf: most samples on the weight loads, 19 GB/s of 27), so the kernels request the
// records a little ahead (Q4_K GEMV 19 -> 27 GB/s in pocket_kernels_bench). The plain
// K-quant vec_dot streams one row, which the hardware follows: prefetching there measured slower.
inline void prefetch_bytes(const void* p, size_t n) {
    for (size_t off = 0; off < n; off += 64) _mm_prefetch(static_cast<const char*>(p) + off, _MM_HINT_T0);
}
template <class R>
inline void prefetch_record(const R* r) { prefetch_bytes(r, sizeof(R)); }
// Record b + ahead: the groups of a matrix follow each other, so near a group's end this asks
// for the next group's first records (with rows of 8 super-blocks, stopping at the group's
// end left 3 of 8 records unfetched: Q6_K GEMV 42 -> 76 GFLOP/s from DRAM). Past the last
// group it names bytes beyond the buffer: a prefetch does not fault, and the address is
// formed as an integer.
template <class R>
inline void prefetch_ahead(const R* x, int64_t b, int64_t ahead, int64_t records = 1) {
    prefetch_bytes(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(x) + static_cast<uintptr_t>(b + ahead) * sizeof(R)),
                   static_cast<size_t>(records) * sizeof(R));
}
constexpr int64_t kKPrefetch = 3;  // super-block records ahead (Q4_K 1152 bytes, Q6_K 1680)
constexpr int64_t kBlockPrefetch = 16; // 32-block records ahead, fetched 8 at a time

// Columns per block, a multiple of `tile`, so that a block's activations (row_bytes per
// column) take about 512 KiB and stay in L2 (1 MiB on Zen 5) while every group of rows passes.
inline int64_t columns_per_block(int64_t row_bytes, int64_t tile) {
    const int64_t fit = (int64_t{512} << 10) / row_bytes;
    return std::max<int64_t>(tile, fit / tile * tile);
}
// Empty rows (n = 0): every dot is 0, as vec_dot gives.
inline void zero_columns(int64_t rows, int64_t m, float* c, size_t cs) {
    for (int64_t j = 0; j < m; ++j) std::fill_n(c + cs * static_cast<size_t>(j), rows, 0.f);
}

// What every group of rows needs of activation block b of column j, computed once per call
// (not once per group): -offset * sum(y), which turns the dots of the stored unsigned
// levels into those of the signed ones, and y's scale as a float.
struct ActBlock {
    int32_t off;
    float d;
};

// Decoding: one activation column against one group of 8 packed rows. acc[k] holds lane k
// (block slot b % 8) of all 8 rows' accumulators: the scalar order, eight outputs at a time,
// and eight independent fma chains for the one column.
template <class P>
void packed32_column(int64_t nb, const typename P::Block* x, const block_q8_0* y, const ActBlock* info, float* c) {
    __m256 acc[8];
    for (auto& v : acc) v = _mm256_setzero_ps();
    auto step = [&](int64_t b, int k) {
        const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].d)));
        const __m256 d = _mm256_mul_ps(dx, _mm256_set1_ps(info[b].d));
        __m256i sums;
#if POCKET_X86_ZMM
        if constexpr (requires { P::pair_sums; }) sums = P::pair_sums(x[b], act_pairs(y[b].qs), _mm256_set1_epi32(info[b].off));
        else
#endif
        {
            typename P::Levels L;
            P::levels(x[b], L);
            sums = P::sums_from(L, y[b], _mm256_set1_epi32(info[b].off));
        }
        acc[k] = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(sums), acc[k]);
    };
    int64_t b = 0;
    for (; b + 8 <= nb; b += 8) {
        // Past the group's end too, into the next group's first records (with 64 blocks a row,
        // stopping at the end left the last 24 of every group to the hardware prefetcher).
        prefetch_ahead(x, b, kBlockPrefetch, 8);
        for (int k = 0; k < 8; ++k) step(b + k, k);
    }
    for (int k = 0; b < nb; ++b, ++k) step(b, k);
    const __m256 u0 = _mm256_add_ps(_mm256_add_ps(acc[0], acc[4]), _mm256_add_ps(acc[2], acc[6]));
    const __m256 u1 = _mm256_add_ps(_mm256_add_ps(acc[1], acc[5]), _mm256_add_ps(acc[3], acc[7]));
    _mm256_storeu_ps(c, _mm256_add_ps(u0, u1));
}

// The rows of a tile in vector lanes: one record (8 rows, ymm) or two consecutive ones
// (16 rows, zmm; x1 = the second group, lanes 8-15).
template <class P>
struct Lanes8 {
    using F = __m256;
    using Levels = typename P::Levels;
    static constexpr int kRows = 8;
    static void levels(const typename P::Block& x0, const typename P::Block&, Levels& L) { P::levels(x0, L); }
    static F scales(const typename P::Block& x0, const typename P::Block&) {
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x0.d)));
    }
    static F sums(const Levels& L, const block_q8_0& y, int32_t off) {
        return _mm256_cvtepi32_ps(P::sums_from(L, y, _mm256_set1_epi32(off)));
    }
    static F zero() { return _mm256_setzero_ps(); }
    static F add(F a, F b) { return _mm256_add_ps(a, b); }
    static F scale(F dx, float dy) { return _mm256_mul_ps(dx, _mm256_set1_ps(dy)); }
    static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
    static void store(float* c, F v) { _mm256_storeu_ps(c, v); }
};
#if POCKET_X86_ZMM
template <class P>
struct Lanes16 {
    using F = __m512;
    using Levels = typename P::Levels16;
    static constexpr int kRows = 16;
    static void levels(const typename P::Block& x0, const typename P::Block& x1, Levels& L) { P::levels16(x0, x1, L); }
    static F scales(const typename P::Block& x0, const typename P::Block& x1) {
        return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x0.d))),
                                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(x1.d)), 1));
    }
    static F sums(const Levels& L, const block_q8_0& y, int32_t off) {
        return _mm512_cvtepi32_ps(P::sums16_from(L, y, _mm512_set1_epi32(off)));
    }
    static F zero() { return _mm512_setzero_ps(); }
    static F add(F a, F b) { return _mm512_add_ps(a, b); }
    static F scale(F dx, float dy) { return _mm512_mul_ps(dx, _mm512_set1_ps(dy)); }
    static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
    static void store(float* c, F v) { _mm512_storeu_ps(c, v); }
};
#endif

// Prompts: V::kRows packed rows x C activation columns. The scalar order gives block b to
// accumulator lane b % 8; the lanes are independent, so this walks them one after another
// (blocks k, k+8, k+16, ... for lane k) and needs one accumulator per column rather than
// eight: C columns share each unpacked record, at the same bits.
//
// One call covers the blocks [b0, b1) of a K chunk (b0 a multiple of 8, so block b stays in
// lane b % 8): `lane` carries the 8 x C lane sums from chunk to chunk (started at zero when
// `first`, folded and stored to c when `last`), so each lane is still one chain in block order.
//
// With few columns the tile is as fast as its records arrive from memory, and the lane walk
// (a stride of 8 records) is a pattern the hardware prefetcher follows late: `ahead` (records
// from x0 and x1 to the next chunk of records, 0 for none) has it requested while this one
// is computed.
template <class V, class P, int C>
void packed32_tile(int64_t b0, int64_t b1, const typename P::Block* x0, const typename P::Block* x1,
                   const block_q8_0* const* y, const ActBlock* const* info, typename V::F (*lane)[C], bool first,
                   bool last, float* c, size_t cs, int64_t ahead) {
    for (int k = 0; k < 8; ++k) {
        typename V::F acc[C];
        for (int j = 0; j < C; ++j) acc[j] = first ? V::zero() : lane[k][j];
        for (int64_t b = b0 + k; b < b1; b += 8) {
            if (ahead) {
                prefetch_record(x0 + b + ahead);
                if (x1 != x0) prefetch_record(x1 + b + ahead);
            }
            if constexpr (V::kRows == 8 && requires { P::kHalves; }) {
                __m256i S[C];
                P::template add_half_sums<C>(x0[b], 0, y, b, S);
                P::template add_half_sums<C>(x0[b], 1, y, b, S);
                const __m256 dx = V::scales(x0[b], x1[b]);
                for (int j = 0; j < C; ++j) {
                    // Q8_0 without VNNI stores the signed levels (offset 0): no add per column.
                    __m256i dot = P::half_sums_total(S[j]);
                    if constexpr (P::kOffset != 0) dot = _mm256_add_epi32(_mm256_set1_epi32(info[j][b].off), dot);
                    acc[j] = V::fmadd(V::scale(dx, info[j][b].d), _mm256_cvtepi32_ps(dot), acc[j]);
                }
            } else {
                typename V::Levels L;
                V::levels(x0[b], x1[b], L);
                const typename V::F dx = V::scales(x0[b], x1[b]);
                for (int j = 0; j < C; ++j)
                    acc[j] = V::fmadd(V::scale(dx, info[j][b].d), V::sums(L, y[j][b], info[j][b].off), acc[j]);
            }
        }
        for (int j = 0; j < C; ++j) lane[k][j] = acc[j];
    }
    if (!last) return;
    for (int j = 0; j < C; ++j) {  // fold_lanes<8>
        const typename V::F u0 = V::add(V::add(lane[0][j], lane[4][j]), V::add(lane[2][j], lane[6][j]));
        const typename V::F u1 = V::add(V::add(lane[1][j], lane[5][j]), V::add(lane[3][j], lane[7][j]));
        V::store(c + cs * j, V::add(u0, u1));
    }
}

// Blocks per K chunk: a group's records of one chunk (about kChunkBytes) stay in L1 while
// every column tile of the block passes over them; without chunks a long row (ffn_down of a
// 7B, n = 11008: 99 KB per 16 rows) was re-read from L2 by each tile. The chunks are about
// equal (multiples of 8 blocks): a short last one would leave the lanes one block each.
constexpr size_t kChunkBytes = size_t{24} << 10;
template <class V, class P>
int64_t chunk_blocks(int64_t nb) {
    constexpr int64_t per = V::kRows / kQ4_0x8Rows;
    const int64_t most = std::max<int64_t>(8, static_cast<int64_t>(kChunkBytes / (per * sizeof(typename P::Block))));
    const int64_t chunks = std::max<int64_t>(1, (nb + most - 1) / most);
    return ((nb + chunks - 1) / chunks + 7) / 8 * 8;
}

// Every group of V::kRows rows against columns j0..j1, C at a time, K chunk by K chunk.
template <class V, class P, int C>
void packed32_rows(int64_t nb, const typename P::Block* p, int64_t groups, const block_q8_0* const* y,
                   const ActBlock* const* info, int64_t j0, int64_t j1, float* c, size_t cs) {
    constexpr int64_t per = V::kRows / kQ4_0x8Rows;  // records side by side
    using Lane = typename V::F[8][C];
    constexpr size_t kFloats = sizeof(typename V::F) / sizeof(float);
    const auto tiles = static_cast<size_t>((j1 - j0 + C - 1) / C);
    thread_local std::vector<float> saved;  // lane sums of every tile of the block, 64-byte aligned
    if (saved.size() < tiles * 8 * C * kFloats + 16) saved.resize(tiles * 8 * C * kFloats + 16);
    Lane* lanes = reinterpret_cast<Lane*>((reinterpret_cast<uintptr_t>(saved.data()) + 63) & ~uintptr_t{63});
    const int64_t kc = chunk_blocks<V, P>(nb);
    for (int64_t g = 0; g + per <= groups; g += per) {
        const typename P::Block* x = p + g * nb;
        float* cg = c + g * kQ4_0x8Rows;
        for (int64_t b0 = 0; b0 < nb; b0 += kc) {
            const int64_t b1 = std::min(nb, b0 + kc);
            const bool first = b0 == 0, last = b1 == nb;
            // The first tile of a chunk asks for the next chunk's records: this group's, or
            // the next group's first (when there is one).
            int64_t ahead = !last ? kc : g + 2 * per <= groups ? per * nb - b0 : 0;
            int64_t j = j0;
            Lane* lane = lanes;
            for (; j + C <= j1; j += C, ahead = 0, ++lane)
                packed32_tile<V, P, C>(b0, b1, x, x + (per - 1) * nb, y + j, info + j, *lane, first, last, cg + cs * j, cs, ahead);
            // the last j1 - j < C columns in one narrower tile
            [&]<int... W>(std::integer_sequence<int, W...>) {
                ((j1 - j == W + 1 ? packed32_tile<V, P, W + 1>(b0, b1, x, x + (per - 1) * nb, y + j, info + j,
                                                               reinterpret_cast<typename V::F(*)[W + 1]>(*lane), first, last,
                                                               cg + cs * j, cs, ahead)
                                  : void()),
                 ...);
            }(std::make_integer_sequence<int, C - 1>{});
        }
    }
}

template <class P>
void packed32_gemm(int64_t n, const void* packed, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    using Block = typename P::Block;
    const int64_t nb = n / 32;
    const auto* p = static_cast<const Block*>(packed);
    const auto* a = static_cast<const uint8_t*>(va);
    const int64_t groups = rows / kQ4_0x8Rows;
    if (nb == 0) return zero_columns(rows, m, c, cs);
    // Per column: its blocks and their ActBlock row. Grown once per thread, then reused, and
    // their contents too while a SameActivations scope vouches for the same rows (mul_mat's
    // chunks: a prompt's 512 columns cost about as much here as 100 rows of tiles).
    thread_local std::vector<ActBlock> infos;
    thread_local std::vector<const block_q8_0*> ys;
    thread_local std::vector<const ActBlock*> info;
    thread_local DerivedActivations derived;
    if (!derived.reuse(va, as, m, nb)) {
        if (infos.size() < static_cast<size_t>(m * nb)) infos.resize(static_cast<size_t>(m * nb));
        if (ys.size() < static_cast<size_t>(m)) ys.resize(static_cast<size_t>(m)), info.resize(static_cast<size_t>(m));
        for (int64_t j = 0; j < m; ++j) {
            const auto* y = reinterpret_cast<const block_q8_0*>(a + as * j);
            ActBlock* row = infos.data() + j * nb;
            for (int64_t b = 0; b < nb; ++b) {
                const int32_t sum = P::kOffset ? hsum_i32(dot_u8(_mm256_set1_epi8(1), load32(y[b].qs))) : 0;
                row[b] = {-P::kOffset * sum, half_f32(y[b].d)};
            }
            ys[static_cast<size_t>(j)] = y;
            info[static_cast<size_t>(j)] = row;
        }
    }
    if (m == 1) {  // decoding: 8 rows at a time (one stream) measured faster than 16
        for (int64_t g = 0; g < groups; ++g) packed32_column<P>(nb, p + g * nb, ys[0], info[0], c + g * kQ4_0x8Rows);
        return;
    }
    // Columns in blocks whose activations stay in L2 while every group of rows passes over
    // them. Tile widths as measured (pocket_kernels_bench gemm_repacked): 16 rows x 6 columns
    // in zmm registers, 8 x 4 in ymm.
    const int64_t block_cols = columns_per_block(nb * static_cast<int64_t>(sizeof(block_q8_0)), 12);  // whole 6- and 4-column tiles
    for (int64_t j0 = 0; j0 < m; j0 += block_cols) {
        const int64_t j1 = std::min(m, j0 + block_cols);
#if POCKET_X86_ZMM
        packed32_rows<Lanes16<P>, P, 6>(nb, p, groups, ys.data(), info.data(), j0, j1, c, cs);
        if (groups % 2) packed32_rows<Lanes8<P>, P, 4>(nb, p + (groups - 1) * nb, 1, ys.data(), info.data(), j0, j1,
                                                      c + (groups - 1) * kQ4_0x8Rows, cs);
#else
        packed32_rows<Lanes8<P>, P, 4>(nb, p, groups, ys.data(), info.data(), j0, j1, c, cs);
#endif
    }
}
void q4_0x8_gemm(int64_t n, const void* packed, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    packed32_gemm<Q4_0x8P>(n, packed, rows, va, as, m, c, cs);
}
void q8_0x8_gemm(int64_t n, const void* packed, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    packed32_gemm<Q8_0x8P>(n, packed, rows, va, as, m, c, cs);
}

// ---------------------------------------------------------------- tiling driver

// Covers rows x m with RxC tiles, the last m % C columns with one narrower tile, and the
// last rows % R rows with one-row tiles: calls tile.template operator()<TR, TC>(i, j) for the
// tile whose first output is (row i, column j). Each output is computed by one tile and every
// tile runs the same per-output sequence. The remaining columns go together (not one by one):
// a batch of a few tokens (serve's slots decoding side by side) reads each weight once.
template <int R, int C, class TileAt>
void for_each_tile(int64_t rows, int64_t m, const TileAt& tile) {
    const int64_t rows_full = rows / R * R, m_full = m / C * C;
    auto columns = [&]<int TC>(int64_t j) {
        for (int64_t i = 0; i < rows_full; i += R) tile.template operator()<R, TC>(i, j);
        for (int64_t i = rows_full; i < rows; ++i) tile.template operator()<1, TC>(i, j);
    };
    for (int64_t j = 0; j < m_full; j += C) columns.template operator()<C>(j);
    [&]<int... W>(std::integer_sequence<int, W...>) {
        ((m - m_full == W + 1 ? columns.template operator()<W + 1>(m_full) : void()), ...);
    }(std::make_integer_sequence<int, C - 1>{});
}

template <template <int, int> class Tile, int R, int C>
void gemm_for(int64_t n, const void* vw, size_t ws, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    const auto* w = static_cast<const uint8_t*>(vw);
    const auto* a = static_cast<const uint8_t*>(va);
    for_each_tile<R, C>(rows, m, [&]<int TR, int TC>(int64_t i, int64_t j) {
        Tile<TR, TC>::run(n, w + ws * i, ws, a + as * j, as, c + cs * j + i, cs);
    });
}

// GEMM of a 32-block type: every block's fp16 d converted to float once per call, for the
// weight rows and the activation rows, instead of gathered and converted in every tile that
// meets it (rows/R times per activation scale, m/C times per weight scale: on Zen the
// gathers were most of the tile's time). Same floats, same operations: same bits.
template <class K, int R, int C>
void q32_gemm(int64_t n, const void* vw, size_t ws, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    using W = typename K::W;
    using A = typename K::A;
    const auto* w = static_cast<const uint8_t*>(vw);
    const auto* a = static_cast<const uint8_t*>(va);
    const int64_t nb = n / 32;
    const size_t stride = static_cast<size_t>((nb + 7) / 8 * 8);
    thread_local std::vector<float> wd, ad;
    wd.assign(stride * static_cast<size_t>(rows), 0.0f);
    ad.assign(stride * static_cast<size_t>(m), 0.0f);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t b = 0; b < nb; ++b) wd[stride * r + b] = block_scale<K>(reinterpret_cast<const W*>(w + ws * r)[b]);
    for (int64_t j = 0; j < m; ++j)
        for (int64_t b = 0; b < nb; ++b) ad[stride * j + b] = half_f32(reinterpret_cast<const A*>(a + as * j)[b].d);
    for_each_tile<R, C>(rows, m, [&]<int TR, int TC>(int64_t i, int64_t j) {
        q32_tile<K, TR, TC>(n, w + ws * i, ws, a + as * j, as, c + cs * j + i, cs, wd.data() + stride * i, stride,
                            ad.data() + stride * j, stride);
    });
}

template <template <int, int> class Tile>
void vec_dot_for(int64_t n, float* out, const void* x, const void* y) {
    Tile<1, 1>::run(n, static_cast<const uint8_t*>(x), 0, static_cast<const uint8_t*>(y), 0, out, 0);
}

template <class K>
struct Q32 {
    template <int R, int C>
    struct T {
        static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
            q32_tile<K, R, C>(n, w, ws, a, as, c, cs);
        }
    };
};
template <GgmlType G>
struct Flt {
    template <int R, int C>
    struct T {
        static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
            float_tile<G, R, C>(n, w, ws, a, as, c, cs);
        }
    };
};
template <class K>
struct KQ {
    template <int R, int C>
    struct T {
        static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
            kquant_tile<K, R, C>(n, w, ws, a, as, c, cs);
        }
    };
};

template <template <int, int> class Tile, int R, int C>
DotEntry entry() {
    return {vec_dot_for<Tile>, gemm_for<Tile, R, C>};
}
// ---------------------------------------------------------------- repacked K-quants and IQ4_XS

// 16 bytes (8 rows' byte a, then their byte b) as the rows' pairs a, b
inline __m128i byte_pairs(const int8_t* p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm_unpacklo_epi8(v, _mm_unpackhi_epi64(v, v));
}

// Rows of one or two interleaved super-block records in the lanes of a vector (8 x
// V::kRecords rows): Rows8 = one record in a ymm, Rows16 = two consecutive records in a zmm.
struct Rows8 {
    using I = __m256i;
    using F = __m256;
    static constexpr int kRecords = 1;
    // 32 bytes of a record's 8 rows (p0); p1, the same bytes of a second record, is for Rows16
    static I lanes(const void* p0, const void*) { return load32(p0); }
    // 8 uint16 values of a record's rows (p0), zero-extended to the int32 lanes
    static I words(const uint16_t* p0, const uint16_t*) { return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p0))); }
    static F halves(const half* h0, const half*) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h0))); }
    // 8 int8 values of a record's rows (p0), sign-extended to the int32 lanes
    static I signed_bytes(const int8_t* p0, const int8_t*) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p0))); }
    // 16 int8 values of a record's rows (p0: 8 rows' byte a, then their byte b) as int16 pairs (a, b)
    static I signed_byte_pairs(const int8_t* p0, const int8_t*) { return _mm256_cvtepi8_epi16(byte_pairs(p0)); }
    static I set1(int32_t v) { return _mm256_set1_epi32(v); }
    static I zero() { return _mm256_setzero_si256(); }
    static I and_(I a, I b) { return _mm256_and_si256(a, b); }
    static I or_(I a, I b) { return _mm256_or_si256(a, b); }
    template <int S> static I srl(I a) { return _mm256_srli_epi32(a, S); }
    template <int S> static I sll(I a) { return _mm256_slli_epi32(a, S); }
    template <int S> static I sra32(I a) { return _mm256_srai_epi32(a, S); }
    template <int S> static I sra16(I a) { return _mm256_srai_epi16(a, S); }
    static I shuffle(I a, I pattern) { return _mm256_shuffle_epi8(a, pattern); }
    static I srl_n(I a, int n) { return _mm256_srl_epi32(a, _mm_cvtsi32_si128(n)); }
    static I broadcast16(__m128i v) { return _mm256_broadcastsi128_si256(v); }
    static I add(I a, I b) { return _mm256_add_epi32(a, b); }
    static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
    static I sub8(I a, I b) { return _mm256_sub_epi8(a, b); }
    // Sums of u8 x s8 products over the eight chunks of a sub-block, then times its scale.
    // With VNNI: int32 lanes (vpdpbusd), scaled by a multiply. Without: int16 pairs from
    // maddubs added as they come (8 chunks x 2 x 15 x 128 <= 30720 fits int16: weights are
    // nibbles, activations Q8_K levels), then one madd with the scale in both int16 halves,
    // which saves the widening madd per chunk.
    static I dot4(I acc, I u, I s) {
#if POCKET_X86_VNNI
        return dpbusd(acc, u, s);
#else
        return _mm256_add_epi16(acc, _mm256_maddubs_epi16(u, s));
#endif
    }
    // dot4's sums times a scale in the form multiplier() gives: int32 with VNNI, else the
    // scale in both int16 halves of each lane.
    static constexpr int kInt16Sums = !POCKET_X86_VNNI;
    static I scaled(I sums, I m) {
#if POCKET_X86_VNNI
        return _mm256_mullo_epi32(sums, m);
#else
        return _mm256_madd_epi16(sums, m);
#endif
    }
    static I multiplier(I scale) {  // 0 <= scale < 2^15 in each int32 lane
#if POCKET_X86_VNNI
        return scale;
#else
        return _mm256_or_si256(scale, _mm256_slli_epi32(scale, 16));
#endif
    }
    static I dot2(I acc, I a, I b) { return madd_add(acc, a, b); }  // acc + two int16 products per lane
    static F cvt(I a) { return _mm256_cvtepi32_ps(a); }
    static F set1f(float v) { return _mm256_set1_ps(v); }
    static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
    static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
    static F fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
    static F zerof() { return _mm256_setzero_ps(); }
    static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
};
#if POCKET_X86_ZMM
struct Rows16 {
    using I = __m512i;
    using F = __m512;
    static constexpr int kRecords = 2;
    static I join(__m256i a, __m256i b) { return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1); }
    static I lanes(const void* p0, const void* p1) { return join(load32(p0), load32(p1)); }
    static I words(const uint16_t* p0, const uint16_t* p1) {
        return _mm512_cvtepu16_epi32(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p0))),
                                                             _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1)), 1));
    }
    static F halves(const half* h0, const half* h1) {
        return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h0))),
                                                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(h1)), 1));
    }
    static I signed_bytes(const int8_t* p0, const int8_t* p1) {
        const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p0));
        return _mm512_cvtepi8_epi32(_mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(lo), reinterpret_cast<const double*>(p1))));
    }
    static I signed_byte_pairs(const int8_t* p0, const int8_t* p1) {
        return _mm512_cvtepi8_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(byte_pairs(p0)), byte_pairs(p1), 1));
    }
    static I set1(int32_t v) { return _mm512_set1_epi32(v); }
    static I zero() { return _mm512_setzero_si512(); }
    static I and_(I a, I b) { return _mm512_and_si512(a, b); }
    static I or_(I a, I b) { return _mm512_or_si512(a, b); }
    template <int S> static I srl(I a) { return _mm512_srli_epi32(a, S); }
    template <int S> static I sll(I a) { return _mm512_slli_epi32(a, S); }
    template <int S> static I sra32(I a) { return _mm512_srai_epi32(a, S); }
    template <int S> static I sra16(I a) { return _mm512_srai_epi16(a, S); }
    static I shuffle(I a, I pattern) { return _mm512_shuffle_epi8(a, pattern); }
    static I srl_n(I a, int n) { return _mm512_srl_epi32(a, _mm_cvtsi32_si128(n)); }
    static I broadcast16(__m128i v) { return _mm512_broadcast_i32x4(v); }
    static I add(I a, I b) { return _mm512_add_epi32(a, b); }
    static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
    static I sub8(I a, I b) { return _mm512_sub_epi8(a, b); }
    static I dot4(I acc, I u, I s) { return _mm512_dpbusd_epi32(acc, u, s); }
    static constexpr int kInt16Sums = 0;
    static I scaled(I sums, I m) { return _mm512_mullo_epi32(sums, m); }
    static I multiplier(I scale) { return scale; }
    static I dot2(I acc, I a, I b) { return _mm512_dpwssd_epi32(acc, a, b); }
    static F cvt(I a) { return _mm512_cvtepi32_ps(a); }
    static F set1f(float v) { return _mm512_set1_ps(v); }
    static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
    static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
    static F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
    static F zerof() { return _mm512_setzero_ps(); }
    static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
};
#endif

// 8 * V::kRecords interleaved rows x C activation columns: per row and column the exact
// isum and summ of the scalar reference (in another order: they are exact), then its two
// fused steps per super-block, the rows in the lanes, so no horizontal sums. x1 is the
// second group's records (Rows16) and is not read by Rows8. R: block_q4_Kx8, or
// block_q5_Kx8, whose levels take a fifth bit from its qh chunks.
template <class V, int C, class R>
    requires(std::is_same_v<R, block_q4_Kx8> || std::is_same_v<R, block_q5_Kx8>)
void kx8_group(int64_t nb, const R* x0, const R* x1, const uint8_t* a, size_t as, float* c, size_t cs) {
    constexpr bool kFive = std::is_same_v<R, block_q5_Kx8>;
    // Without VNNI the maddubs pairs are summed in int16: 8 chunks x 2 x 15 x 128 = 30720 for
    // nibbles; five-bit levels (31) allow 4 chunks (31744) before they are scaled.
    constexpr int kChunksPerSum = kFive && V::kInt16Sums ? 4 : 8;
    using I = typename V::I;
    using F = typename V::F;
    F acc[C];
    for (int j = 0; j < C; ++j) acc[j] = V::zerof();
    const I low6 = V::set1(0x3f3f3f3f), low4 = V::set1(0x0f0f0f0f), top2 = V::set1(0x03030303);
    const I bit4 = V::set1(0x10101010);
    const I byte0 = V::set1(0xFF), byte2 = V::set1(0x00FF0000);
    for (int64_t b = 0; b < nb; ++b) {
        const R& r0 = x0[b];
        const R& r1 = x1[V::kRecords == 2 ? b : 0];
        // decoding (one column, 8 rows: see kx8_gemm) streams the weights: ask for them early
        if (C == 1 && V::kRecords == 1) prefetch_ahead(x0, b, kKPrefetch);
        // Each row's 12 scale bytes as three dwords -> scales 0..3, 4..7 and mins 0..3, 4..7
        // as bytes of one dword per row (the same values as k4_scale_min).
        const I u0 = V::lanes(r0.scales[0], r1.scales[0]), u1 = V::lanes(r0.scales[1], r1.scales[1]),
                u2 = V::lanes(r0.scales[2], r1.scales[2]);
        const I sc_lo = V::and_(u0, low6);
        const I sc_hi = V::or_(V::and_(u2, low4), V::template sll<4>(V::and_(V::template srl<6>(u0), top2)));
        const I mn_lo = V::and_(u1, low6);
        const I mn_hi = V::or_(V::and_(V::template srl<4>(u2), low4), V::template sll<4>(V::and_(V::template srl<6>(u1), top2)));
        // mins as int16 pairs (min 2t, min 2t+1), against pairs of activation sub-block sums
        const I mins[4] = {V::or_(V::and_(mn_lo, byte0), V::and_(V::template sll<8>(mn_lo), byte2)),
                           V::or_(V::and_(V::template srl<16>(mn_lo), byte0), V::and_(V::template srl<8>(mn_lo), byte2)),
                           V::or_(V::and_(mn_hi, byte0), V::and_(V::template sll<8>(mn_hi), byte2)),
                           V::or_(V::and_(V::template srl<16>(mn_hi), byte0), V::and_(V::template srl<8>(mn_hi), byte2))};
        const block_q8_K* y[C];
        for (int j = 0; j < C; ++j) y[j] = reinterpret_cast<const block_q8_K*>(a + as * j) + b;
        I isum[C];
        for (int j = 0; j < C; ++j) isum[j] = V::zero();
        for (int ch = 0; ch < 4; ++ch) {
            const I scl = ch < 2 ? sc_lo : sc_hi;  // scales 2ch and 2ch+1: bytes (2ch)%4 and +1
            const I s_even = V::multiplier(V::and_(ch % 2 ? V::template srl<16>(scl) : scl, byte0));
            const I s_odd = V::multiplier(V::and_(ch % 2 ? V::template srl<24>(scl) : V::template srl<8>(scl), byte0));
            // each chunk's nibbles are unpacked once and used by every column
            for (int k0 = 0; k0 < 8; k0 += kChunksPerSum) {
                I d_lo[C], d_hi[C];
                for (int j = 0; j < C; ++j) d_lo[j] = d_hi[j] = V::zero();
#if POCKET_X86_ZMM
                if constexpr (C == 1 && V::kRecords == 1) {
                    // Decoding: two chunks per 512-bit multiply-add, as the Q4_0 GEMV (act_pairs):
                    // gemv_repacked/q4_K/avx512 from L2 47 -> 60 GB/s; 1B Q4_K_M decoding -t 2
                    // best 66.6 -> 75.3 t/s, median 65.1 -> 68.3 (5 alternating).
                    static_assert(kChunksPerSum == 8, "one pass covers the sub-block pair's 8 chunks");
                    const ActPairs alo = act_pairs(y[0]->qs + 64 * ch), ahi = act_pairs(y[0]->qs + 64 * ch + 32);
                    const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
                    __m512i sl = _mm512_setzero_si512(), sh = _mm512_setzero_si512();
                    for (int i = 0; i < 4; ++i) {
                        const __m512i q = _mm512_loadu_si512(r0.qs[8 * ch + 2 * i]);
                        __m512i lo = _mm512_and_si512(q, m4), hi = _mm512_and_si512(_mm512_srli_epi32(q, 4), m4);
                        if constexpr (kFive) {
                            const __m512i h = _mm512_srl_epi32(_mm512_loadu_si512(r0.qh[2 * i]), _mm_cvtsi32_si128(2 * ch));
                            lo = _mm512_or_si512(lo, _mm512_and_si512(_mm512_slli_epi32(h, 4), b4));
                            hi = _mm512_or_si512(hi, _mm512_and_si512(_mm512_slli_epi32(h, 3), b4));
                        }
                        sl = _mm512_dpbusd_epi32(sl, lo, alo.a[i]);
                        sh = _mm512_dpbusd_epi32(sh, hi, ahi.a[i]);
                    }
                    d_lo[0] = add_halves(sl);
                    d_hi[0] = add_halves(sh);
                } else
#endif
#if !POCKET_X86_ZMM  // with 16 ymm registers a full unroll spills the sums (AVX2: 160 vs 205 GFLOP/s)
#pragma GCC unroll 2
#endif
                for (int k = k0; k < k0 + kChunksPerSum; ++k) {
                    const I q = V::lanes(r0.qs[8 * ch + k], r1.qs[8 * ch + k]);
                    I lo = V::and_(q, low4), hi = V::and_(V::template srl<4>(q), low4);
                    if constexpr (kFive) {  // bits 2ch (low nibbles' sub-block) and 2ch + 1 to bit 4
                        const I h = V::srl_n(V::lanes(r0.qh[k], r1.qh[k]), 2 * ch);
                        lo = V::or_(lo, V::and_(V::template sll<4>(h), bit4));
                        hi = V::or_(hi, V::and_(V::template sll<3>(h), bit4));
                    }
                    for (int j = 0; j < C; ++j) {
                        const int8_t* yq = y[j]->qs + 64 * ch + 4 * k;
                        d_lo[j] = V::dot4(d_lo[j], lo, V::set1(dword_at(yq)));
                        d_hi[j] = V::dot4(d_hi[j], hi, V::set1(dword_at(yq + 32)));
                        // column by column (127 -> 208 GFLOP/s AVX2, 175 -> 235 AVX-VNNI)
                        sum_in_order(d_lo[j], d_hi[j]);
                    }
                }
                for (int j = 0; j < C; ++j) isum[j] = V::add(isum[j], V::add(V::scaled(d_lo[j], s_even), V::scaled(d_hi[j], s_odd)));
            }
        }
        const F dx = V::halves(r0.d, r1.d), dmx = V::halves(r0.dmin, r1.dmin);
        for (int j = 0; j < C; ++j) {
            const block_q8_K& yj = *y[j];
            // the sub-block sums of y in pairs: int16 (bsums[4t] + bsums[4t+1], bsums[4t+2] + bsums[4t+3])
            alignas(16) int16_t ps[8];
            _mm_store_si128(reinterpret_cast<__m128i*>(ps),
                            _mm_hadd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(yj.bsums)),
                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(yj.bsums + 8))));
            I summ = V::zero();
            for (int t = 0; t < 4; ++t) summ = V::dot2(summ, mins[t], V::set1(dword_at(ps + 2 * t)));
            const F yd = V::set1f(yj.d);
            acc[j] = V::fmadd(V::mul(dx, yd), V::cvt(isum[j]), acc[j]);
            acc[j] = V::fnmadd(V::mul(dmx, yd), V::cvt(summ), acc[j]);
        }
    }
    for (int j = 0; j < C; ++j) V::store(c + cs * j, acc[j]);
}

// ---------------------------------------------------------------- repacked Q6_K

// Pattern for V::shuffle: in every dword, byte i of the result is byte b[i] of the same
// dword (-1: zero). The shuffle indexes bytes of a 16-byte lane, so dword k adds 4k.
template <class V>
typename V::I dword_pattern(int b0, int b1, int b2, int b3) {
    auto byte = [](int b, int k) { return static_cast<uint32_t>(b < 0 ? 0x80 : b + 4 * k); };
    alignas(16) uint32_t lane[4];
    for (int k = 0; k < 4; ++k) lane[k] = byte(b0, k) | byte(b1, k) << 8 | byte(b2, k) << 16 | byte(b3, k) << 24;
    return V::broadcast16(_mm_load_si128(reinterpret_cast<const __m128i*>(lane)));
}

// 8 * V::kRecords interleaved Q6_K rows x C activation columns, as the Q4_K / Q5_K kx8_group:
// the exact isum of the scalar reference per row and column, with the levels 0..63 taken
// unsigned from the record's three planes (sum scale * q * y) and the -32 offset through the
// activation's 16-element sums, then one fused step per super-block. Sixteen groups of 16
// elements (group g = 8h + 2q + half16), each with its own scale (one sign-extending load).
template <class V, int C>
void kx8_group(int64_t nb, const block_q6_Kx8* x0, const block_q6_Kx8* x1, const uint8_t* a, size_t as, float* c,
               size_t cs) {
    using I = typename V::I;
    using F = typename V::F;
    // Without VNNI two chunks' maddubs pairs are summed in int16: 2 x 2 x 63 x 128 = 32256.
    constexpr int kChunksPerSum = V::kInt16Sums ? 2 : 4;
    F acc[C];
    for (int j = 0; j < C; ++j) acc[j] = V::zerof();
    const I low4 = V::set1(0x0f0f0f0f), low6 = V::set1(0x3f3f3f3f), bits45 = V::set1(0x30303030);
    const I int16_pair = dword_pattern<V>(0, 1, 0, 1);  // an int32 lane's low int16 in both halves
    // The -32 offset: with int32 sums (VNNI) and several columns, each group's sum starts at
    // -32 x its activation sum (one broadcast each), so it is sum (q - 32) y; else it is summed
    // once per super-block through (scale, scale) pairs. (int16 sums leave no room for it; on
    // VNNI, kernel benchmark from L2: the GEMM 238 GFLOP/s folded against 220 with a per-group
    // offset, the GEMV 32 GB/s folded against 40 with the pairs.)
    constexpr bool kFoldOffset = !V::kInt16Sums && C > 1;
    for (int64_t b = 0; b < nb; ++b) {
        const block_q6_Kx8& r0 = x0[b];
        const block_q6_Kx8& r1 = x1[V::kRecords == 2 ? b : 0];
        if (C == 1 && V::kRecords == 1) prefetch_ahead(x0, b, kKPrefetch);  // decoding streams the weights
        const block_q8_K* y[C];
        for (int j = 0; j < C; ++j) y[j] = reinterpret_cast<const block_q8_K*>(a + as * j) + b;
        I isum[C];
        for (int j = 0; j < C; ++j) isum[j] = V::zero();
        // Decoding (C = 1) takes the four quarters at once: each chunk's three planes are loaded
        // once (the registers hold 4 sums); with more columns, one quarter at a time.
        constexpr int kQuarters = C == 1 ? 4 : 1;
        for (int h = 0; h < 2; ++h) {
            // unrolled, so that each quarter's choice of planes and shifts is made at compile time
            // (a loop over quarters kept them as branches and loaded every plane: prompts 12% slower)
#pragma GCC unroll 4
            for (int q0 = 0; q0 < 4; q0 += kQuarters) {
                for (int half16 = 0; half16 < 2; ++half16) {
                    const auto group = [&](int i) { return 8 * h + 2 * (q0 + i) + half16; };
                    I scale[kQuarters];  // int32; without VNNI the int16 scale in both halves of a lane
                    for (int i = 0; i < kQuarters; ++i) {
                        scale[i] = V::signed_bytes(r0.scales[group(i)], r1.scales[group(i)]);
                        if constexpr (V::kInt16Sums) scale[i] = V::shuffle(scale[i], int16_pair);
                    }
                    for (int c0 = 4 * half16; c0 < 4 * half16 + 4; c0 += kChunksPerSum) {
                        I d[kQuarters][C];
                        for (int i = 0; i < kQuarters; ++i)
                            for (int j = 0; j < C; ++j)
                                d[i][j] = kFoldOffset && c0 == 4 * half16 ? V::set1(-32 * y[j]->bsums[group(i)]) : V::zero();
                        for (int cc = c0; cc < c0 + kChunksPerSum; ++cc) {
                            // the planes a quarter needs (a plane no quarter reads is not loaded)
                            const auto plane = [&](int p) { return V::lanes(r0.q[8 * h + cc][p], r1.q[8 * h + cc][p]); };
                            const I p0 = plane(0), p1 = plane(1), p2 = plane(2);
                            for (int i = 0; i < kQuarters; ++i) {
                                const int q = q0 + i;
                                // quarters 0, 1: the low six bits; 2, 3: a nibble of plane 2 or-ed with bits
                                // 6-7 of plane 0 or 1 moved to 4-5 (32-bit shifts: the masks drop what crosses bytes)
                                const I lv = q < 2 ? V::and_(q == 0 ? p0 : p1, low6)
                                                   : V::or_(V::and_(q == 2 ? p2 : V::template srl<4>(p2), low4),
                                                            V::and_(V::template srl<2>(q == 2 ? p0 : p1), bits45));
                                for (int j = 0; j < C; ++j)
                                    d[i][j] = V::dot4(d[i][j], lv, V::set1(dword_at(y[j]->qs + 128 * h + 32 * q + 4 * cc)));
                            }
                        }
                        for (int i = 0; i < kQuarters; ++i)
                            for (int j = 0; j < C; ++j) isum[j] = V::add(isum[j], V::scaled(d[i][j], scale[i]));
                    }
                }
            }
        }
        if constexpr (!kFoldOffset) {  // isum -= 32 sum scale x bsums, from (scale 2t, scale 2t + 1) pairs
            I off[C];
            for (int j = 0; j < C; ++j) off[j] = V::zero();
            for (int t = 0; t < 8; ++t) {
                const I pair = V::signed_byte_pairs(r0.scales[2 * t], r1.scales[2 * t]);
                for (int j = 0; j < C; ++j) off[j] = V::dot2(off[j], pair, V::set1(dword_at(y[j]->bsums + 2 * t)));
            }
            for (int j = 0; j < C; ++j) isum[j] = V::sub(isum[j], V::template sll<5>(off[j]));
        }
        const F dx = V::halves(r0.d, r1.d);
        for (int j = 0; j < C; ++j) acc[j] = V::fmadd(V::mul(dx, V::set1f(y[j]->d)), V::cvt(isum[j]), acc[j]);
    }
    for (int j = 0; j < C; ++j) V::store(c + cs * j, acc[j]);
}

#include "kernels/x86/iq4_xs_x8.inl"
#include "kernels/x86/q23_k_x8.inl"

// The repacked K-quants: columns in blocks (columns_per_block); within a block, tiles of C columns.
template <class V, int C, class R>
void kx8_groups(int64_t nb, const R* p, int64_t g0, int64_t g1, const uint8_t* a, size_t as, int64_t m, float* c,
                size_t cs) {
    const int64_t block_cols = columns_per_block(nb * static_cast<int64_t>(sizeof(block_q8_K)), C);
    for (int64_t j0 = 0; j0 < m; j0 += block_cols) {
        const int64_t j1 = std::min(m, j0 + block_cols);
        for (int64_t g = g0; g < g1; g += V::kRecords) {
            const R* x = p + g * nb;
            const R* x1 = V::kRecords == 2 ? x + nb : x;
            float* cg = c + g * kQ4_0x8Rows;
            int64_t j = j0;
            for (; j + C <= j1; j += C) kx8_group<V, C>(nb, x, x1, a + as * j, as, cg + cs * j, cs);
            for (; j < j1; ++j) kx8_group<V, 1>(nb, x, x1, a + as * j, as, cg + cs * j, cs);
        }
    }
}

template <class R>
void kx8_gemm(int64_t n, const void* packed, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    const int64_t nb = n / kQKK;
    const auto* p = static_cast<const R*>(packed);
    const auto* a = static_cast<const uint8_t*>(va);
    const int64_t groups = rows / kQ4_0x8Rows;
    if (nb == 0) return zero_columns(rows, m, c, cs);
    int64_t g = 0;
#if POCKET_X86_ZMM
    if (m > 1) {  // decoding: 8 rows (one stream) measured faster
        g = groups / 2 * 2;
        kx8_groups<Rows16, 4>(nb, p, 0, g, a, as, m, c, cs);
    }
#endif
    kx8_groups<Rows8, 4>(nb, p, g, groups, a, as, m, c, cs);
}
void q4_Kx8_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    kx8_gemm<block_q4_Kx8>(n, packed, rows, a, as, m, c, cs);
}
void q5_Kx8_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    kx8_gemm<block_q5_Kx8>(n, packed, rows, a, as, m, c, cs);
}
void q6_Kx8_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    kx8_gemm<block_q6_Kx8>(n, packed, rows, a, as, m, c, cs);
}
void iq4_xsx8_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    kx8_gemm<block_iq4_xsx8>(n, packed, rows, a, as, m, c, cs);
}
void q2_Kx8_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    kx8_gemm<block_q2_Kx8>(n, packed, rows, a, as, m, c, cs);
}
void q3_Kx8_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    kx8_gemm<block_q3_Kx8>(n, packed, rows, a, as, m, c, cs);
}

#include "kernels/x86/iq_x86.inl"

// K-quants: one row by several columns (more rows measured slower: the prep is per row;
// rows in the lanes for decoding measured slower too).
template <class K>
DotEntry kquant_entry() {
#if POCKET_X86_ZMM
    return entry<KQ<K>::template T, 1, 8>();  // 8 columns: ~20% over 4 with 512-bit sums, 16 slower
#else
    return entry<KQ<K>::template T, 1, 4>();  // 8 measured ~7% slower on AVX2
#endif
}
template <class K, int R, int C>
DotEntry q32_entry() {
    if constexpr (K::kOffset) return entry<Q32<K>::template T, R, C>();
    else return {vec_dot_for<Q32<K>::template T>, q32_gemm<K, R, C>};
}

void fill_x86(IsaTable& t) {
    // Tile shapes: 32-blocks keep R*C*8 pending int32 vectors, so stay small; floats
    // hold R*C*4 (AVX2) or *2 (AVX-512) accumulators.
    t[GgmlType::Q4_0] = q32_entry<Q4_0K, 2, 2>();
    t[GgmlType::Q4_1] = q32_entry<Q4_1K, 2, 2>();
    t[GgmlType::Q5_0] = q32_entry<Q5_0K, 2, 2>();
    t[GgmlType::Q5_1] = q32_entry<Q5_1K, 2, 2>();
    t[GgmlType::Q8_0] = q32_entry<Q8_0K, 2, 2>();
    t[GgmlType::IQ4_NL] = q32_entry<IQ4_NLK, 2, 2>();
#if POCKET_X86_ZMM
    t[GgmlType::F32] = entry<Flt<GgmlType::F32>::T, 3, 4>();
    t[GgmlType::F16] = entry<Flt<GgmlType::F16>::T, 3, 4>();
    t[GgmlType::BF16] = entry<Flt<GgmlType::BF16>::T, 3, 4>();
#else
    t[GgmlType::F32] = entry<Flt<GgmlType::F32>::T, 1, 3>();
    t[GgmlType::F16] = entry<Flt<GgmlType::F16>::T, 1, 3>();
    t[GgmlType::BF16] = entry<Flt<GgmlType::BF16>::T, 1, 3>();
#endif
    t[GgmlType::Q4_K] = kquant_entry<K45<false>>();
    t[GgmlType::Q5_K] = kquant_entry<K45<true>>();
    t[GgmlType::Q6_K] = kquant_entry<K6>();
    t[GgmlType::Q2_K] = kquant_entry<K2>();
    t[GgmlType::Q3_K] = kquant_entry<K3>();
    t[GgmlType::IQ4_XS] = kquant_entry<KXS>();
    t[GgmlType::IQ2_XXS] = kquant_entry<KIq2xxs>();
    t[GgmlType::IQ2_XS] = kquant_entry<KIq2xs>();
    t[GgmlType::IQ2_S] = kquant_entry<KIq2s>();
    t[GgmlType::IQ3_XXS] = kquant_entry<KIq3xxs>();
    t[GgmlType::IQ3_S] = kquant_entry<KIq3s>();
    t[GgmlType::IQ1_S] = kquant_entry<KIq1s>();
    t[GgmlType::IQ1_M] = kquant_entry<KIq1m>();
    t[GgmlType::MXFP4] = q32_entry<Mxfp4K, 2, 2>();
}

}  // namespace
}  // namespace pocket::kernels
