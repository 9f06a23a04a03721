// Scalar dot products: the reference order of dot_order.hpp, written plainly.
#include "kernels/blocks.hpp"
#include "kernels/dot_order.hpp"
#include "kernels/float16.hpp"
#include "kernels/row_functions.hpp"

#include <cstring>

namespace pocket::kernels::scalar {
namespace {

template <class Load>
float float_dot(int64_t n, Load load_xy) {
    float acc[kFloatLanes] = {};
    const int64_t padded = (n + kFloatLanes - 1) / kFloatLanes * kFloatLanes;
    for (int64_t i = 0; i < padded; ++i) {
        float x = 0, y = 0;
        if (i < n) load_xy(i, x, y);
        acc[i % kFloatLanes] = std::fma(x, y, acc[i % kFloatLanes]);
    }
    return fold_lanes<kFloatLanes>(acc);
}

// 32-element block types: `block(b, sumi, dxdy, mx, sy)` gives block b's exact integer
// dot, its scale product, and for Q4_1/Q5_1 the offset term's factors (m_x, s_y).
template <bool kHasOffset, class Block>
float block_dot(int64_t nb, Block block) {
    float acc[kBlockLanes] = {};
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi;
        float dxdy, mx = 0, sy = 0;
        block(b, sumi, dxdy, mx, sy);
        float& a = acc[b % kBlockLanes];
        a = std::fma(dxdy, static_cast<float>(sumi), a);
        if constexpr (kHasOffset) a = std::fma(mx, sy, a);
    }
    return fold_lanes<kBlockLanes>(acc);
}

inline int32_t dot_i8(const int8_t* a, const int8_t* b, int n) {
    int32_t s = 0;
    for (int i = 0; i < n; ++i) s += static_cast<int32_t>(a[i]) * b[i];
    return s;
}

// Unpack 32 4-bit levels (low nibbles are elements 0..15) minus `offset`.
inline void unpack_nibbles(const uint8_t* qs, int offset, int8_t* out) {
    for (int j = 0; j < 16; ++j) {
        out[j] = static_cast<int8_t>((qs[j] & 0xF) - offset);
        out[j + 16] = static_cast<int8_t>((qs[j] >> 4) - offset);
    }
}

inline void unpack_q5(const uint8_t* qs, const uint8_t* qhb, int offset, int8_t* out) {
    uint32_t qh;
    std::memcpy(&qh, qhb, 4);
    for (int j = 0; j < 16; ++j) {
        out[j] = static_cast<int8_t>(((qs[j] & 0xF) | ((qh >> j) & 1) << 4) - offset);
        out[j + 16] = static_cast<int8_t>(((qs[j] >> 4) | ((qh >> (j + 16)) & 1) << 4) - offset);
    }
}

}  // namespace

void vec_dot_f32(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const float*>(vx);
    const auto* y = static_cast<const float*>(vy);
    *out = float_dot(n, [&](int64_t i, float& a, float& b) { a = x[i]; b = y[i]; });
}

void vec_dot_f16(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const half*>(vx);
    const auto* y = static_cast<const half*>(vy);
    *out = float_dot(n, [&](int64_t i, float& a, float& b) { a = fp16_to_f32(x[i]); b = fp16_to_f32(y[i]); });
}

void vec_dot_bf16(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const bf16*>(vx);
    const auto* y = static_cast<const bf16*>(vy);
    *out = float_dot(n, [&](int64_t i, float& a, float& b) { a = bf16_to_f32(x[i]); b = bf16_to_f32(y[i]); });
}

void vec_dot_q4_0(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q4_0*>(vx);
    const auto* y = static_cast<const block_q8_0*>(vy);
    *out = block_dot<false>(n / kQK, [&](int64_t b, int32_t& s, float& d, float&, float&) {
        int8_t w[32];
        unpack_nibbles(x[b].qs, 8, w);
        s = dot_i8(w, y[b].qs, 32);
        d = fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d);
    });
}

void vec_dot_q4_1(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q4_1*>(vx);
    const auto* y = static_cast<const block_q8_1*>(vy);
    *out = block_dot<true>(n / kQK, [&](int64_t b, int32_t& s, float& d, float& m, float& sy) {
        int8_t w[32];
        unpack_nibbles(x[b].qs, 0, w);
        s = dot_i8(w, y[b].qs, 32);
        d = fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d);
        m = fp16_to_f32(x[b].m);
        sy = fp16_to_f32(y[b].s);
    });
}

void vec_dot_q5_0(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q5_0*>(vx);
    const auto* y = static_cast<const block_q8_0*>(vy);
    *out = block_dot<false>(n / kQK, [&](int64_t b, int32_t& s, float& d, float&, float&) {
        int8_t w[32];
        unpack_q5(x[b].qs, x[b].qh, 16, w);
        s = dot_i8(w, y[b].qs, 32);
        d = fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d);
    });
}

void vec_dot_q5_1(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q5_1*>(vx);
    const auto* y = static_cast<const block_q8_1*>(vy);
    *out = block_dot<true>(n / kQK, [&](int64_t b, int32_t& s, float& d, float& m, float& sy) {
        int8_t w[32];
        unpack_q5(x[b].qs, x[b].qh, 0, w);
        s = dot_i8(w, y[b].qs, 32);
        d = fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d);
        m = fp16_to_f32(x[b].m);
        sy = fp16_to_f32(y[b].s);
    });
}

void vec_dot_q8_0(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q8_0*>(vx);
    const auto* y = static_cast<const block_q8_0*>(vy);
    *out = block_dot<false>(n / kQK, [&](int64_t b, int32_t& s, float& d, float&, float&) {
        s = dot_i8(x[b].qs, y[b].qs, 32);
        d = fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d);
    });
}

void vec_dot_iq4_nl(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_iq4_nl*>(vx);
    const auto* y = static_cast<const block_q8_0*>(vy);
    *out = block_dot<false>(n / kQK, [&](int64_t b, int32_t& s, float& d, float&, float&) {
        int8_t w[32];
        for (int j = 0; j < 16; ++j) {
            w[j] = kIq4nlValues[x[b].qs[j] & 0xF];
            w[j + 16] = kIq4nlValues[x[b].qs[j] >> 4];
        }
        s = dot_i8(w, y[b].qs, 32);
        d = fp16_to_f32(x[b].d) * fp16_to_f32(y[b].d);
    });
}

void vec_dot_mxfp4(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_mxfp4*>(vx);
    const auto* y = static_cast<const block_q8_0*>(vy);
    *out = block_dot<false>(n / kQK, [&](int64_t b, int32_t& s, float& d, float&, float&) {
        int8_t w[32];
        for (int j = 0; j < 16; ++j) {
            w[j] = kMxfp4Values[x[b].qs[j] & 0xF];
            w[j + 16] = kMxfp4Values[x[b].qs[j] >> 4];
        }
        s = dot_i8(w, y[b].qs, 32);
        d = e8m0_to_f32_half(x[b].e) * fp16_to_f32(y[b].d);
    });
}

// ---- super-block types: exact integer sums per 256, then two fused steps ----
namespace {
inline void superblock_step(float& acc, float d, int32_t isum, float dmin, int32_t summ) {
    acc = std::fma(d, static_cast<float>(isum), acc);
    acc = std::fma(-dmin, static_cast<float>(summ), acc);
}
}  // namespace

void vec_dot_q2_K(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q2_K*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        int32_t isum = 0, summ = 0;
        for (int j = 0; j < 16; ++j) {  // 16 groups of 16, in element order
            const int half128 = j / 8, shift = 2 * ((j % 8) / 2), part = j % 2;
            const uint8_t* q = x[i].qs + 32 * half128 + 16 * part;
            int32_t s = 0;
            for (int l = 0; l < 16; ++l) s += ((q[l] >> shift) & 3) * y[i].qs[16 * j + l];
            isum += (x[i].scales[j] & 0xF) * s;
            summ += (x[i].scales[j] >> 4) * y[i].bsums[j];
        }
        superblock_step(acc, y[i].d * fp16_to_f32(x[i].d), isum, y[i].d * fp16_to_f32(x[i].dmin), summ);
    }
    *out = acc;
}

void vec_dot_q3_K(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q3_K*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < 16; ++j) {
            const int half128 = j / 8, shift = 2 * ((j % 8) / 2), part = j % 2;
            const uint8_t* q = x[i].qs + 32 * half128 + 16 * part;
            const uint8_t* hm = x[i].hmask + 16 * part;
            const int bit = j / 2;  // hmask bit: one per 32 elements
            int32_t s = 0;
            for (int l = 0; l < 16; ++l) {
                const int v = ((q[l] >> shift) & 3) - ((hm[l] >> bit) & 1 ? 0 : 4);
                s += v * y[i].qs[16 * j + l];
            }
            isum += q3k_scale(j, x[i].scales) * s;
        }
        superblock_step(acc, y[i].d * fp16_to_f32(x[i].d), isum, 0.0f, 0);
    }
    *out = acc;
}

void vec_dot_q4_K(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q4_K*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        int32_t isum = 0, summ = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            k4_scale_min(j, x[i].scales, sc, m);
            const uint8_t* q = x[i].qs + 32 * (j / 2);
            const int shift = 4 * (j % 2);
            int32_t s = 0;
            for (int l = 0; l < 32; ++l) s += ((q[l] >> shift) & 0xF) * y[i].qs[32 * j + l];
            isum += sc * s;
            summ += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
        }
        superblock_step(acc, y[i].d * fp16_to_f32(x[i].d), isum, y[i].d * fp16_to_f32(x[i].dmin), summ);
    }
    *out = acc;
}

void vec_dot_q5_K(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q5_K*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        int32_t isum = 0, summ = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t sc, m;
            k4_scale_min(j, x[i].scales, sc, m);
            const uint8_t* q = x[i].qs + 32 * (j / 2);
            const int shift = 4 * (j % 2);
            int32_t s = 0;
            for (int l = 0; l < 32; ++l) {
                const int v = ((q[l] >> shift) & 0xF) | (((x[i].qh[l] >> j) & 1) << 4);
                s += v * y[i].qs[32 * j + l];
            }
            isum += sc * s;
            summ += m * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
        }
        superblock_step(acc, y[i].d * fp16_to_f32(x[i].d), isum, y[i].d * fp16_to_f32(x[i].dmin), summ);
    }
    *out = acc;
}

void vec_dot_q6_K(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_q6_K*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        // levels - 32 in element order: per 128, ql low/high nibbles and 2 bits of qh each
        int8_t L[kQKK];
        for (int h = 0; h < 2; ++h) {
            const uint8_t* ql = x[i].ql + 64 * h;
            const uint8_t* qh = x[i].qh + 32 * h;
            for (int l = 0; l < 32; ++l) {
                L[128 * h + l] = static_cast<int8_t>(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
                L[128 * h + l + 32] = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
                L[128 * h + l + 64] = static_cast<int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                L[128 * h + l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
        }
        int32_t isum = 0;
        for (int j = 0; j < 16; ++j) isum += x[i].scales[j] * dot_i8(L + 16 * j, y[i].qs + 16 * j, 16);
        superblock_step(acc, y[i].d * fp16_to_f32(x[i].d), isum, 0.0f, 0);
    }
    *out = acc;
}

void vec_dot_iq4_xs(int64_t n, float* out, const void* vx, const void* vy) {
    const auto* x = static_cast<const block_iq4_xs*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i) {
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* qs = x[i].qs + 16 * ib;
            int32_t s = 0;
            for (int j = 0; j < 16; ++j) {
                s += kIq4nlValues[qs[j] & 0xF] * y[i].qs[32 * ib + j];
                s += kIq4nlValues[qs[j] >> 4] * y[i].qs[32 * ib + j + 16];
            }
            isum += iq4xs_scale(ib, x[i]) * s;
        }
        superblock_step(acc, y[i].d * fp16_to_f32(x[i].d), isum, 0.0f, 0);
    }
    *out = acc;
}

}  // namespace pocket::kernels::scalar
