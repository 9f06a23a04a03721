// The fixed tree that adds the 32 lane sums of a product's output (mul_mat*.comp, mul_mm.comp):
// stride 16 (lane l += lane l+16), then 8, 4, 2, 1. The large strides go through shared
// memory; those below `shuffle_below` (the subgroup size, when the device shuffles) as
// subgroupShuffleXor butterflies, which give the lanes that carry on the same additions, so
// both ways give the same bits.
//
// Needs before it: LANES (32), `shared float partial[][LANES]` holding each output's lane
// sums at partial[o][lane]. Every invocation of the workgroup must call it; afterwards
// partial[o][0] holds output o for o in [o0, o0 + n).
void lane_tree(uint lane, uint o0, uint n, uint shuffle_below) {
    barrier();
    for (uint s = LANES / 2u; s > 0u && s >= shuffle_below; s >>= 1) {
        if (lane < s)
            for (uint o = o0; o < o0 + n; ++o) {
                precise float v = partial[o][lane] + partial[o][lane + s];
                partial[o][lane] = v;
            }
        barrier();
    }
#if defined(GL_KHR_shader_subgroup_shuffle)
    if (shuffle_below > 0u) {
        for (uint o = o0; o < o0 + n; ++o) {
            precise float v = partial[o][lane];
            for (uint s = min(shuffle_below, LANES) / 2u; s > 0u; s >>= 1) {
                precise float w = v + subgroupShuffleXor(v, s);
                v = w;
            }
            if (lane == 0u) partial[o][0] = v;
        }
        barrier();
    }
#endif
}
