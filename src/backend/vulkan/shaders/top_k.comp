#version 450
// top_k: the indices of the k largest values of each row of src0 (f32), largest first, ties
// to the lowest index (the CPU's order), as int32 into dst [k, rows...]. Rows are short
// (a router's experts), so one invocation takes a row and picks k times: each pick is the
// best value ordered after the previous one (smaller, or equal with a higher index).
#include "common.glsl"

layout(local_size_x = 64) in;
layout(binding = 4) writeonly buffer Dst { int dst[]; };

void main() {
    const uint row = flat_group() * 64u + gl_LocalInvocationID.x;
    const uint n = P.ne[0].x, ne1 = P.ne[0].y, ne2 = P.ne[0].z;
    if (row >= ne1 * ne2 * P.ne[0].w) return;
    const uint i1 = row % ne1, i2 = (row / ne1) % ne2, i3 = row / (ne1 * ne2);
    const uint src = i1 * P.nb[0].y + i2 * P.nb[0].z + i3 * P.nb[0].w;
    const uint at = P.offs_d.x + i1 * P.nb[4].y + i2 * P.nb[4].z + i3 * P.nb[4].w;
    float prev_v = 0.0;
    int prev_j = -1;
    for (uint r = 0u; r < P.ne[4].x; ++r) {
        int best_j = -1;
        float best_v = 0.0;
        for (uint j = 0u; j < n; ++j) {
            const float v = SRC0_F(src + j * P.nb[0].x);
            const bool after = prev_j < 0 || v < prev_v || (v == prev_v && int(j) > prev_j);
            if (after && (best_j < 0 || v > best_v)) {
                best_j = int(j);
                best_v = v;
            }
        }
        dst[(at >> 2) + r] = best_j;
        prev_v = best_v;
        prev_j = best_j;
    }
}
