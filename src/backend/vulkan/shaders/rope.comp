#version 450
// Rotary embedding of src0 [head_dim, n_head, n_tokens] by positions src1 (i32 per token),
// NORM (adjacent pairs) or NEOX (halves) by i.x (mode), with llama3 frequency factors (src2
// when i.w != 0) and YaRN, as pocket's CPU rope. One thread per rotated pair.
// SHIFT=1: rope_shift, in place on the cells of a cache view (dst = src0's memory, f32 or
// f16 by IO_F16), rotating by src1's delta.
// Params: i.x mode, i.y n_rot, i.z n_ctx_orig; f = (freq_base, freq_scale, ext_factor,
// attn_factor), f2 = (beta_fast, beta_slow, corr low, corr high).
#include "common.glsl"
layout(local_size_x = 256) in;
#if SHIFT == 0
layout(binding = 4) writeonly buffer Dst { float dst[]; };
#elif IO_F16 == 0
layout(binding = 4) buffer Dst { float dst[]; };
#else
layout(binding = 4) buffer Dst { uint16_t dsth[]; };
#endif

float load(uint byte) {
#if SHIFT == 0
    return SRC0_F(byte);
#elif IO_F16 == 0
    return dst[(P.offs_d.x + byte) >> 2];
#else
    return half_at(dsth[(P.offs_d.x + byte) >> 1]);
#endif
}
void store_at(uint byte_src, uint byte_dst, float v) {
#if SHIFT == 0
    dst[(P.offs_d.x + byte_dst) >> 2] = v;
#elif IO_F16 == 0
    dst[(P.offs_d.x + byte_src) >> 2] = v;
#else
    dsth[(P.offs_d.x + byte_src) >> 1] = uint16_t(packHalf2x16(vec2(v, 0.0)) & 0xFFFFu);
#endif
}

void main() {
    const uint idx = flat_group() * 256u + gl_LocalInvocationID.x;
    const uvec4 ne = P.ne[0];
    const uint n_rot = uint(P.i.y), half_rot = n_rot / 2u;
    if (idx >= half_rot * ne.y * ne.z) return;
    const uint pair = idx % half_rot, h = (idx / half_rot) % ne.y, tok = idx / (half_rot * ne.y);
    const float pos = float(SRC1_I(tok * 4u));
    const float theta_scale = pow(P.f.x, -2.0 / float(n_rot));
    const float extrap = pos * pow(theta_scale, float(pair)) / (P.i.w != 0 ? SRC2_F(pair * 4u) : 1.0);
    const float interp = P.f.y * extrap;
    float theta = interp, mscale = P.f.w;
    if (P.f.z != 0.0) {
        const float y = (float(pair) - P.f2.z) / max(0.001, P.f2.w - P.f2.z);
        const float mix = (1.0 - min(1.0, max(0.0, y))) * P.f.z;
        theta = interp * (1.0 - mix) + extrap * mix;
        mscale *= 1.0 + 0.1 * log(1.0 / P.f.y);
    }
    const float c = cos(theta) * mscale, s = sin(theta) * mscale;
    const uint ia = P.i.x == 2 ? pair : 2u * pair, ib = P.i.x == 2 ? pair + half_rot : 2u * pair + 1u;
    const uint base = h * P.nb[0].y + tok * P.nb[0].z;
    const uint dbase = h * P.nb[4].y + tok * P.nb[4].z;
    const float x0 = load(base + ia * P.nb[0].x), x1 = load(base + ib * P.nb[0].x);
    store_at(base + ia * P.nb[0].x, dbase + ia * 4u, x0 * c - x1 * s);
    store_at(base + ib * P.nb[0].x, dbase + ib * 4u, x0 * s + x1 * c);
#if SHIFT == 0
    // Dims past n_rot pass through (the first pair's thread copies them).
    if (pair == 0u)
        for (uint k = n_rot; k < ne.x; ++k) store_at(base + k * P.nb[0].x, dbase + k * 4u, load(base + k * P.nb[0].x));
#endif
}
