#version 450
// get_rows: dst row (i1, i2, i3) = row src1[i1, i2, i3] of src0 (any TYPE_*), dequantized;
// src0's dim 2 follows i2 when it has more than one. One workgroup of 32 lanes per row, lane l
// taking element l of each chunk of 32.
#include "common.glsl"
#include "dequant.glsl"
layout(local_size_x = 32) in;
layout(binding = 4) writeonly buffer Dst { float dst[]; };

void main() {
    const uint r = flat_group(), lane = gl_LocalInvocationID.x;
    const uvec4 ne = P.ne[4];
    if (r >= ne.y * ne.z * ne.w) return;
    const uint i1 = r % ne.y, i2 = (r / ne.y) % ne.z, i3 = r / (ne.y * ne.z);
    const int id = SRC1_I(i1 * P.nb[1].x + i2 * P.nb[1].y + i3 * P.nb[1].z);
    if (id < 0 || uint(id) >= P.ne[0].y) return;
    const uint row = uint(id) * P.nb[0].y + (P.ne[0].z > 1u ? i2 * P.nb[0].z : 0u);
    const uint d = (P.offs_d.x + i1 * P.nb[4].y + i2 * P.nb[4].z + i3 * P.nb[4].w) >> 2;
    for (uint ch = 0u; ch * 32u + lane < ne.x; ++ch) dst[d + ch * 32u + lane] = dequant1(row, ch, lane);
}
