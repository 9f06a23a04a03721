#version 450
// add, mul, swiglu (silu(a) * b), geglu (gelu(a) * b): b broadcasts (b.ne[i] divides a.ne[i]).
#include "common.glsl"
#include "elementwise.glsl"

void main() {
    uvec4 i;
    if (!element_coords(i)) return;
    const float a = SRC0_F(byte_of(i, P.nb[0]));
    const float b = SRC1_F(byte_of(i % P.ne[1], P.nb[1]));
#if defined(OP_ADD)
    store(i, a + b);
#elif defined(OP_MUL)
    store(i, a * b);
#elif defined(OP_SWIGLU)
    store(i, silu(a) * b);
#elif defined(OP_GEGLU)
    store(i, gelu(a) * b);
#endif
}
