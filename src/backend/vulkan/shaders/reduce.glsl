// A workgroup-wide sum or max of one value per thread in a fixed tree (the same on every
// device and run). WG threads, a power of two.
shared float red[WG];
float group_reduce(float v, bool is_max) {
    const uint t = gl_LocalInvocationID.x;
    barrier();
    red[t] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (t < s) red[t] = is_max ? max(red[t], red[t + s]) : red[t] + red[t + s];
        barrier();
    }
    return red[0];
}
float group_sum(float v) { return group_reduce(v, false); }
float group_max(float v) { return group_reduce(v, true); }
