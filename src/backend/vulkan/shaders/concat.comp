#version 450
// concat of f32 src0 and src1 along dim i.x.
#include "common.glsl"
#include "elementwise.glsl"

void main() {
    uvec4 i;
    if (!element_coords(i)) return;
    const uint dim = uint(P.i.x);
    const uint a_len = dim == 0u ? P.ne[0].x : dim == 1u ? P.ne[0].y : dim == 2u ? P.ne[0].z : P.ne[0].w;
    uvec4 c = i;
    const uint at = dim == 0u ? c.x : dim == 1u ? c.y : dim == 2u ? c.z : c.w;
    if (at < a_len) {
        store(i, SRC0_F(byte_of(c, P.nb[0])));
    } else {
        if (dim == 0u) c.x -= a_len; else if (dim == 1u) c.y -= a_len; else if (dim == 2u) c.z -= a_len; else c.w -= a_len;
        store(i, SRC1_F(byte_of(c, P.nb[1])));
    }
}
