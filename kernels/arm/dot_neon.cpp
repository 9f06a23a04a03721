// NEON (ARMv8.2 dotprod) kernels: F32, F16, Q4_0, Q8_0, MXFP4, Q4_K, Q5_K, Q6_K and the grid
// i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M (iq_neon.inl), with
// register-tiled GEMM. Every other type keeps the scalar reference (same bits, see
// dot_order.hpp): BF16, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, IQ4_XS, TQ1_0, TQ2_0.
#include "kernels/blocks.hpp"
#include "kernels/dot_order.hpp"
#include "kernels/float16.hpp"
#include "kernels/iq_grids.hpp"
#include "kernels/isa_table.hpp"

#include <arm_neon.h>

#include <cmath>
#include <cstring>
#include <type_traits>

namespace pocket::kernels {
namespace {

// ---- float rows: 32 canonical lanes = 8 float32x4 accumulators ----
template <GgmlType T>
struct FloatRow;
template <>
struct FloatRow<GgmlType::F32> {
    using E = float;
    static float32x4_t load4(const E* p) { return vld1q_f32(p); }
};
template <>
struct FloatRow<GgmlType::F16> {
    using E = uint16_t;
    static float32x4_t load4(const E* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
};

// fold_lanes<32>: vector k holds lanes 4k..4k+3.
inline float fold32(float32x4_t* v) {
    for (int k = 0; k < 4; ++k) v[k] = vaddq_f32(v[k], v[k + 4]);  // h = 16
    for (int k = 0; k < 2; ++k) v[k] = vaddq_f32(v[k], v[k + 2]);  // h = 8
    const float32x4_t s4 = vaddq_f32(v[0], v[1]);                    // h = 4
    const float32x2_t s2 = vadd_f32(vget_low_f32(s4), vget_high_f32(s4));  // h = 2
    return vget_lane_f32(s2, 0) + vget_lane_f32(s2, 1);               // h = 1
}

template <GgmlType T, int R, int C>
void float_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
    using F = FloatRow<T>;
    using E = typename F::E;
    float32x4_t acc[R][C][8];
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j)
            for (auto& v : acc[r][j]) v = vdupq_n_f32(0);
    auto step = [&](const E* const* xs, const E* const* ys) {
        for (int k = 0; k < 8; ++k) {
            float32x4_t xv[R], yv[C];
            for (int r = 0; r < R; ++r) xv[r] = F::load4(xs[r] + 4 * k);
            for (int j = 0; j < C; ++j) yv[j] = F::load4(ys[j] + 4 * k);
            for (int r = 0; r < R; ++r)
                for (int j = 0; j < C; ++j) acc[r][j][k] = vfmaq_f32(acc[r][j][k], xv[r], yv[j]);
        }
    };
    const int64_t full = n / 32 * 32;
    for (int64_t i = 0; i < full; i += 32) {
        const E* xs[R];
        const E* ys[C];
        for (int r = 0; r < R; ++r) xs[r] = reinterpret_cast<const E*>(w + ws * r) + i;
        for (int j = 0; j < C; ++j) ys[j] = reinterpret_cast<const E*>(a + as * j) + i;
        step(xs, ys);
    }
    if (full < n) {  // zero-padded tail, as the scalar reference
        E xt[R][32] = {}, yt[C][32] = {};
        const E* xs[R];
        const E* ys[C];
        for (int r = 0; r < R; ++r) {
            std::memcpy(xt[r], reinterpret_cast<const E*>(w + ws * r) + full, sizeof(E) * static_cast<size_t>(n - full));
            xs[r] = xt[r];
        }
        for (int j = 0; j < C; ++j) {
            std::memcpy(yt[j], reinterpret_cast<const E*>(a + as * j) + full, sizeof(E) * static_cast<size_t>(n - full));
            ys[j] = yt[j];
        }
        step(xs, ys);
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j) c[cs * j + r] = fold32(acc[r][j]);
}

// ---- 32-element blocks: exact integer dot per block (sdot), scalar fused step per block ----
struct Q4_0N {
    using W = block_q4_0;
    static float scale(const W& b) { return fp16_to_f32(b.d); }
    static void levels(const W& b, int8x16_t& lo, int8x16_t& hi) {
        const uint8x16_t q = vld1q_u8(b.qs);
        lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), vdupq_n_s8(8));
        hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), vdupq_n_s8(8));
    }
};
struct Q8_0N {
    using W = block_q8_0;
    static float scale(const W& b) { return fp16_to_f32(b.d); }
    static void levels(const W& b, int8x16_t& lo, int8x16_t& hi) {
        lo = vld1q_s8(b.qs);
        hi = vld1q_s8(b.qs + 16);
    }
};

template <class K, int R, int C>
void q32_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
    using W = typename K::W;
    float acc[R][C][kBlockLanes] = {};
    for (int64_t b = 0; b < n / 32; ++b) {
        int8x16_t lo[R], hi[R];
        float dx[R];
        for (int r = 0; r < R; ++r) {
            const W& wb = reinterpret_cast<const W*>(w + ws * r)[b];
            K::levels(wb, lo[r], hi[r]);
            dx[r] = K::scale(wb);
        }
        for (int j = 0; j < C; ++j) {
            const block_q8_0& yb = reinterpret_cast<const block_q8_0*>(a + as * j)[b];
            const int8x16_t y0 = vld1q_s8(yb.qs), y1 = vld1q_s8(yb.qs + 16);
            const float dy = fp16_to_f32(yb.d);
            for (int r = 0; r < R; ++r) {
                const int32x4_t s = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo[r], y0), hi[r], y1);
                float& lane = acc[r][j][b % kBlockLanes];
                lane = std::fma(dx[r] * dy, static_cast<float>(vaddvq_s32(s)), lane);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j) c[cs * j + r] = fold_lanes<kBlockLanes>(acc[r][j]);
}

// ---- K-quants: levels unpacked once per super-block and weight row, exact integer sums
// per sub-block (sdot + add across lanes), then the scalar reference's two fused steps ----
inline int32_t sdot32(int8x16_t a0, int8x16_t a1, const int8_t* y) {
    return vaddvq_s32(vdotq_s32(vdotq_s32(vdupq_n_s32(0), a0, vld1q_s8(y)), a1, vld1q_s8(y + 16)));
}

inline void kquant_step(float& acc, float d, int32_t isum, float dmin, int32_t summ) {
    acc = std::fma(d, static_cast<float>(isum), acc);
    acc = std::fma(-dmin, static_cast<float>(summ), acc);
}

template <bool kQ5>
struct K45N {
    using W = std::conditional_t<kQ5, block_q5_K, block_q4_K>;
    struct Prep {
        int8x16_t q[16];  // 256 levels in element order
        int32_t sc[8], m[8];
    };
    static void prep(const W& b, Prep& p) {
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            k4_scale_min(j, b.scales, sc, m);
            p.sc[j] = sc;
            p.m[j] = m;
        }
        for (int ch = 0; ch < 4; ++ch) {
            for (int h = 0; h < 2; ++h) {
                const uint8x16_t q = vld1q_u8(b.qs + 32 * ch + 16 * h);
                uint8x16_t lo = vandq_u8(q, vdupq_n_u8(0x0F)), hi = vshrq_n_u8(q, 4);
                if constexpr (kQ5) {
                    const uint8x16_t qh = vld1q_u8(b.qh + 16 * h);
                    const uint8x16_t one = vdupq_n_u8(1);
                    lo = vorrq_u8(lo, vshlq_n_u8(vandq_u8(vshlq_u8(qh, vdupq_n_s8(static_cast<int8_t>(-2 * ch))), one), 4));
                    hi = vorrq_u8(hi, vshlq_n_u8(vandq_u8(vshlq_u8(qh, vdupq_n_s8(static_cast<int8_t>(-2 * ch - 1))), one), 4));
                }
                p.q[4 * ch + h] = vreinterpretq_s8_u8(lo);
                p.q[4 * ch + 2 + h] = vreinterpretq_s8_u8(hi);
            }
        }
    }
    static void dot(const Prep& p, const W& b, const block_q8_K& y, float& acc) {
        int32_t isum = 0, summ = 0;
        for (int j = 0; j < 8; ++j) {
            isum += p.sc[j] * sdot32(p.q[2 * j], p.q[2 * j + 1], y.qs + 32 * j);
            summ += p.m[j] * (y.bsums[2 * j] + y.bsums[2 * j + 1]);
        }
        kquant_step(acc, y.d * fp16_to_f32(b.d), isum, y.d * fp16_to_f32(b.dmin), summ);
    }
};

struct K6N {
    using W = block_q6_K;
    struct Prep {
        int8x16_t q[16];  // levels - 32, element order
    };
    static void prep(const W& b, Prep& p) {
        const uint8x16_t m4 = vdupq_n_u8(0x0F), m2 = vdupq_n_u8(3);
        for (int h = 0; h < 2; ++h) {
            for (int half16 = 0; half16 < 2; ++half16) {
                const uint8x16_t l0 = vld1q_u8(b.ql + 64 * h + 16 * half16);
                const uint8x16_t l1 = vld1q_u8(b.ql + 64 * h + 32 + 16 * half16);
                const uint8x16_t qh = vld1q_u8(b.qh + 32 * h + 16 * half16);
                const uint8x16_t lows[4] = {vandq_u8(l0, m4), vandq_u8(l1, m4), vshrq_n_u8(l0, 4), vshrq_n_u8(l1, 4)};
                for (int quarter = 0; quarter < 4; ++quarter) {
                    const uint8x16_t high = vandq_u8(vshlq_u8(qh, vdupq_n_s8(static_cast<int8_t>(-2 * quarter))), m2);
                    const uint8x16_t level = vorrq_u8(lows[quarter], vshlq_n_u8(high, 4));
                    p.q[8 * h + 2 * quarter + half16] = vsubq_s8(vreinterpretq_s8_u8(level), vdupq_n_s8(32));
                }
            }
        }
    }
    static void dot(const Prep& p, const W& b, const block_q8_K& y, float& acc) {
        int32_t isum = 0;
        for (int j = 0; j < 16; ++j)
            isum += b.scales[j] * vaddvq_s32(vdotq_s32(vdupq_n_s32(0), p.q[j], vld1q_s8(y.qs + 16 * j)));
        kquant_step(acc, y.d * fp16_to_f32(b.d), isum, 0.0f, 0);
    }
};

template <class K, int R, int C>
void kquant_tile(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
    using W = typename K::W;
    float acc[R][C] = {};
    for (int64_t i = 0; i < n / kQKK; ++i) {
        typename K::Prep prep[R];
        for (int r = 0; r < R; ++r) K::prep(reinterpret_cast<const W*>(w + ws * r)[i], prep[r]);
        for (int r = 0; r < R; ++r)
            for (int j = 0; j < C; ++j)
                K::dot(prep[r], reinterpret_cast<const W*>(w + ws * r)[i], reinterpret_cast<const block_q8_K*>(a + as * j)[i],
                       acc[r][j]);
    }
    for (int r = 0; r < R; ++r)
        for (int j = 0; j < C; ++j) {
            if constexpr (requires { K::kFactor; }) c[cs * j + r] = acc[r][j] * K::kFactor;  // the i-quants' 1/8, 1/4
            else c[cs * j + r] = acc[r][j];
        }
}

#include "kernels/arm/iq_neon.inl"

// ---- driver (same shape as the x86 one) ----
using TileFn = void (*)(int64_t, const uint8_t*, size_t, const uint8_t*, size_t, float*, size_t);

template <TileFn Full, TileFn RowEdge, TileFn ColEdge, TileFn One, int R, int C>
void gemm_tiled(int64_t n, const void* vw, size_t ws, int64_t rows, const void* va, size_t as, int64_t m, float* c,
                size_t cs) {
    const auto* w = static_cast<const uint8_t*>(vw);
    const auto* a = static_cast<const uint8_t*>(va);
    const int64_t rows_full = rows / R * R, m_full = m / C * C;
    for (int64_t j = 0; j < m_full; j += C) {
        for (int64_t i = 0; i < rows_full; i += R) Full(n, w + ws * i, ws, a + as * j, as, c + cs * j + i, cs);
        for (int64_t i = rows_full; i < rows; ++i) RowEdge(n, w + ws * i, ws, a + as * j, as, c + cs * j + i, cs);
    }
    for (int64_t j = m_full; j < m; ++j) {
        for (int64_t i = 0; i < rows_full; i += R) ColEdge(n, w + ws * i, ws, a + as * j, as, c + cs * j + i, cs);
        for (int64_t i = rows_full; i < rows; ++i) One(n, w + ws * i, ws, a + as * j, as, c + cs * j + i, cs);
    }
}

template <class K>
struct Q32 {
    template <int R, int C>
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
        q32_tile<K, R, C>(n, w, ws, a, as, c, cs);
    }
};
template <GgmlType G>
struct Flt {
    template <int R, int C>
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
        float_tile<G, R, C>(n, w, ws, a, as, c, cs);
    }
};

template <class K>
struct KQ {
    template <int R, int C>
    static void run(int64_t n, const uint8_t* w, size_t ws, const uint8_t* a, size_t as, float* c, size_t cs) {
        kquant_tile<K, R, C>(n, w, ws, a, as, c, cs);
    }
};

template <class Tile, int R, int C>
DotEntry entry() {
    auto dot = [](int64_t n, float* out, const void* x, const void* y) {
        Tile::template run<1, 1>(n, static_cast<const uint8_t*>(x), 0, static_cast<const uint8_t*>(y), 0, out, 0);
    };
    return {dot, gemm_tiled<Tile::template run<R, C>, Tile::template run<1, C>, Tile::template run<R, 1>,
                            Tile::template run<1, 1>, R, C>};
}

}  // namespace

void fill_neon(IsaTable& t) {
    t[GgmlType::F32] = entry<Flt<GgmlType::F32>, 1, 2>();
    t[GgmlType::F16] = entry<Flt<GgmlType::F16>, 1, 2>();
    t[GgmlType::Q4_0] = entry<Q32<Q4_0N>, 2, 4>();
    t[GgmlType::Q8_0] = entry<Q32<Q8_0N>, 2, 4>();
    t[GgmlType::Q4_K] = entry<KQ<K45N<false>>, 1, 4>();
    t[GgmlType::Q5_K] = entry<KQ<K45N<true>>, 1, 4>();
    t[GgmlType::Q6_K] = entry<KQ<K6N>, 1, 4>();
    t[GgmlType::MXFP4] = entry<Q32<Mxfp4N>, 2, 4>();
    t[GgmlType::IQ2_XXS] = entry<KQ<NIq2xxs>, 1, 4>();
    t[GgmlType::IQ2_XS] = entry<KQ<NIq2xs>, 1, 4>();
    t[GgmlType::IQ2_S] = entry<KQ<NIq2s>, 1, 4>();
    t[GgmlType::IQ3_XXS] = entry<KQ<NIq3xxs>, 1, 4>();
    t[GgmlType::IQ3_S] = entry<KQ<NIq3s>, 1, 4>();
    t[GgmlType::IQ1_S] = entry<KQ<NIq1s>, 1, 4>();
    t[GgmlType::IQ1_M] = entry<KQ<NIq1m>, 1, 4>();
}

}  // namespace pocket::kernels
