#version 450
// rms_norm (RMS=1: x / sqrt(mean(x^2) + eps)) and norm (RMS=0: centred first), one workgroup
// per row; eps in f.x.
#include "common.glsl"
#define WG 256u
#include "reduce.glsl"
layout(local_size_x = 256) in;
layout(binding = 4) writeonly buffer Dst { float dst[]; };

void main() {
    const uint r = flat_group(), t = gl_LocalInvocationID.x;
    const uvec4 ne = P.ne[4];
    if (r >= ne.y * ne.z * ne.w) return;
    const uvec4 i = uvec4(0u, r % ne.y, (r / ne.y) % ne.z, r / (ne.y * ne.z));
    const uint a = i.y * P.nb[0].y + i.z * P.nb[0].z + i.w * P.nb[0].w;
    const uint d = P.offs_d.x + i.y * P.nb[4].y + i.z * P.nb[4].z + i.w * P.nb[4].w;
    const uint n = ne.x;
    float mean = 0.0;
#if RMS == 0
    float s = 0.0;
    for (uint k = t; k < n; k += WG) s += SRC0_F(a + k * P.nb[0].x);
    mean = group_sum(s) / float(n);
#endif
    float s2 = 0.0;
    for (uint k = t; k < n; k += WG) {
        const float v = SRC0_F(a + k * P.nb[0].x) - mean;
        s2 = fma(v, v, s2);
    }
    const float scale = 1.0 / sqrt(group_sum(s2) / float(n) + P.f.x);
    for (uint k = t; k < n; k += WG) dst[(d + k * 4u) >> 2] = (SRC0_F(a + k * P.nb[0].x) - mean) * scale;
}
