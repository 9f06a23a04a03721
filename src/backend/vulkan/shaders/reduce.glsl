// A workgroup-wide sum or max of one value per thread in a fixed tree (the same on every
// device and run). WG threads, a power of two.
shared float red[WG];
float group_sum(float v) {
    const uint t = gl_LocalInvocationID.x;
    barrier();
    red[t] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (t < s) red[t] = red[t] + red[t + s];
        barrier();
    }
    return red[0];
}
float group_max(float v) {
    const uint t = gl_LocalInvocationID.x;
    barrier();
    red[t] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2u; s > 0u; s >>= 1) {
        if (t < s) red[t] = max(red[t], red[t + s]);
        barrier();
    }
    return red[0];
}
