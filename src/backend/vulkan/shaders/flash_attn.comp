#version 450
// Fused attention for one (query, head) per workgroup of 32 lanes: an online softmax over
// blocks of 32 kv cells. q = src0 f32 [d, n_head, n_q]; k = src1, v = src2 (KV_F32 / KV_F16 /
// KV_Q8_0) [d|dv, n_head_kv, n_kv]; mask = src3 f32 [n_kv, >= n_q] when i.z != 0; result f32
// [dv, n_head, n_q]. Params: f.x scale, f.y softcap, i.x causal, i.y window (with i.x, after
// the causal rule; without, over the mask's last visible cell).
//
// Fixed order, independent of the batch: lane l scores cell 32b + l (its d products in order);
// block maximum and sum by a fixed tree; output dim j (owned by lane j % 32) accumulates the
// block's 32 cells in order. Blocks masked -inf for this query are skipped, so the result does
// not depend on how many masked cells the cache view holds.
#include "common.glsl"
layout(local_size_x = 32) in;
layout(binding = 4) writeonly buffer Dst { float dst[]; };

const uint MAX_D = 256u;
shared float q_s[MAX_D];
shared float p_s[32];
shared float red[32];

#if defined(KV_F32)
float k_at(uint row, uint e) { return SRC1_F(row + 4u * e); }
float v_at(uint row, uint e) { return SRC2_F(row + 4u * e); }
#elif defined(KV_F16)
float k_at(uint row, uint e) { return half_at(s1h[(P.offs.y + row + 2u * e) >> 1]); }
float v_at(uint row, uint e) { return half_at(s2h[(P.offs.z + row + 2u * e) >> 1]); }
#else
float q8_at(uint b, uint e, bool is_k) {
    const uint blk = b + (e / 32u) * 34u, q = blk + 2u + (e % 32u);
    const uint off = is_k ? P.offs.y : P.offs.z;
    const uint dh = uint(is_k ? s1h[(off + blk) >> 1] : s2h[(off + blk) >> 1]);
    const uint qw = uint(is_k ? s1h[(off + q) >> 1] : s2h[(off + q) >> 1]);
    const int qv = int(((qw >> (((off + q) & 1u) * 8u)) & 0xFFu) << 24) >> 24;
    return float(qv) * unpackHalf2x16(dh).x;
}
float k_at(uint row, uint e) { return q8_at(row, e, true); }
float v_at(uint row, uint e) { return q8_at(row, e, false); }
#endif

float tree(float v, bool is_max) {
    const uint l = gl_LocalInvocationID.x;
    barrier();
    red[l] = v;
    barrier();
    [[unroll]] for (uint s = 16u; s > 0u; s >>= 1) {
        if (l < s) red[l] = is_max ? max(red[l], red[l + s]) : red[l] + red[l + s];
        barrier();
    }
    return red[0];
}

void main() {
    const uint lane = gl_LocalInvocationID.x;
    const uint n_head = P.ne[0].y, n_q = P.ne[0].z;
    const uint h = gl_WorkGroupID.x, t = gl_WorkGroupID.y;
    const uint d = P.ne[0].x, dv = P.ne[2].x, n_kv = P.ne[1].z;
    const uint hk = h / (n_head / P.ne[1].y);
    const float ninf = -1.0 / 0.0;

    for (uint e = lane; e < d; e += 32u) q_s[e] = SRC0_F(h * P.nb[0].y + t * P.nb[0].z + e * P.nb[0].x);
    barrier();

    // A layer's sliding window over a mask (gemma2, gemma3): the query sits at the last cell
    // its mask row leaves visible, and sees the `window` cells ending there.
    int window_start = 0;
    if (P.i.x == 0 && P.i.y > 0 && P.i.z != 0) {
        float last = -1.0;
        for (uint c = lane; c < n_kv; c += 32u) {
            const float mv = SRC3_F(t * P.nb[3].y + c * P.nb[3].x);
            if (!(isinf(mv) && mv < 0.0)) last = max(last, float(c));
        }
        window_start = int(tree(last, true)) + 1 - P.i.y;
    }

    float acc[MAX_D / 32u];
    [[unroll]] for (uint k = 0u; k < MAX_D / 32u; ++k) acc[k] = 0.0;
    float m = ninf, sum = 0.0;
    const int pos = int(n_kv) - int(n_q) + int(t);

    for (uint c0 = 0u; c0 < n_kv; c0 += 32u) {
        const uint cell = c0 + lane;
        float s = ninf;
        if (cell < n_kv) {
            float mv = P.i.z != 0 ? SRC3_F(t * P.nb[3].y + cell * P.nb[3].x) : 0.0;
            if (P.i.x != 0 && (int(cell) > pos || (P.i.y > 0 && int(cell) <= pos - P.i.y))) mv = ninf;
            if (int(cell) < window_start) mv = ninf;
            if (!(isinf(mv) && mv < 0.0)) {
                const uint krow = hk * P.nb[1].y + cell * P.nb[1].z;
                precise float dot_ = 0.0;
                for (uint e = 0u; e < d; ++e) dot_ = fma(q_s[e], k_at(krow, e), dot_);
                s = dot_ * P.f.x;
                if (P.f.y > 0.0) s = P.f.y * tanh(s / P.f.y);
                s += mv;
            }
        }
        const float bmax = tree(s, true);
        if (isinf(bmax) && bmax < 0.0) continue;   // the whole block is masked for this query
        const float m_new = max(m, bmax);
        const float corr = exp(m - m_new);
        const float p = exp(s - m_new);
        sum = sum * corr + tree(p, false);
        m = m_new;
        p_s[lane] = p;
        barrier();
        [[unroll]] for (uint k = 0u; k < MAX_D / 32u; ++k) {
            const uint j = lane + 32u * k;
            if (j < dv) {
                precise float a = acc[k] * corr;
                for (uint c = 0u; c < 32u && c0 + c < n_kv; ++c) {
                    if (p_s[c] != 0.0) a = fma(p_s[c], v_at(hk * P.nb[2].y + (c0 + c) * P.nb[2].z, j), a);
                }
                acc[k] = a;
            }
        }
        barrier();
    }
    const float inv = sum > 0.0 ? 1.0 / sum : 0.0;
    [[unroll]] for (uint k = 0u; k < MAX_D / 32u; ++k) {
        const uint j = lane + 32u * k;
        if (j < dv) dst[(P.offs_d.x >> 2) + (t * n_head + h) * dv + j] = acc[k] * inv;
    }
}
