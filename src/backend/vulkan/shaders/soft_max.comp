#version 450
// soft_max over each row: x*scale (f.x), softcap (f.y > 0: cap*tanh(x/cap)), + mask (src1
// row i1 when i.z != 0), causal rule (i.x) with window (i.y); a fully masked row gives zeros.
// One workgroup per row; scratch is the result row itself.
#include "common.glsl"
#define WG 256u
#include "reduce.glsl"
layout(local_size_x = 256) in;
layout(binding = 4) buffer Dst { float dst[]; };

void main() {
    const uint r = flat_group(), t = gl_LocalInvocationID.x;
    const uvec4 ne = P.ne[4];
    if (r >= ne.y * ne.z * ne.w) return;
    const uvec4 i = uvec4(0u, r % ne.y, (r / ne.y) % ne.z, r / (ne.y * ne.z));
    const uint a = i.y * P.nb[0].y + i.z * P.nb[0].z + i.w * P.nb[0].w;
    const uint d = (P.offs_d.x + i.y * P.nb[4].y + i.z * P.nb[4].z + i.w * P.nb[4].w) >> 2;
    const uint n = ne.x;
    const int pos = int(n) - int(ne.y) + int(i.y);
    float mx = -1.0 / 0.0;
    for (uint k = t; k < n; k += WG) {
        float v = SRC0_F(a + k * P.nb[0].x) * P.f.x;
        if (P.f.y > 0.0) v = P.f.y * tanh(v / P.f.y);
        if (P.i.z != 0) v += SRC1_F(i.y * P.nb[1].y + k * P.nb[1].x);
        if (P.i.x != 0 && (int(k) > pos || (P.i.y > 0 && int(k) <= pos - P.i.y))) v = -1.0 / 0.0;
        dst[d + k] = v;
        mx = max(mx, v);
    }
    mx = group_max(mx);
    if (isinf(mx) && mx < 0.0) {
        for (uint k = t; k < n; k += WG) dst[d + k] = 0.0;
        return;
    }
    float s = 0.0;
    for (uint k = t; k < n; k += WG) {
        const float e = exp(dst[d + k] - mx);
        dst[d + k] = e;
        s += e;
    }
    const float inv = 1.0 / group_sum(s);
    for (uint k = t; k < n; k += WG) dst[d + k] *= inv;
}
