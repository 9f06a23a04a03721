#version 450
// scale (by f.x), silu, gelu, tanh.
#include "common.glsl"
#include "elementwise.glsl"

void main() {
    uvec4 i;
    if (!element_coords(i)) return;
    const float a = SRC0_F(byte_of(i, P.nb[0]));
#if defined(OP_SCALE)
    store(i, a * P.f.x);
#elif defined(OP_SILU)
    store(i, silu(a));
#elif defined(OP_GELU)
    store(i, gelu(a));
#elif defined(OP_TANH)
    // 1 - 2 / (e^2|a| + 1): no inf / inf for large |a| (soft-capping feeds it large logits).
    store(i, sign(a) * (1.0 - 2.0 / (exp(2.0 * abs(a)) + 1.0)));
#endif
}
