#pragma once
// The f32 dot product the backend's own code uses (attention, the F32/F16 mul_mat fallback).
// Eight partial sums combined in a fixed tree: the result depends only on the inputs and n,
// never on the thread that computes it.
#include <cstdint>

namespace pocket::cpu {

inline float dot_f32(const float* x, const float* y, int64_t n) {
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += x[i + l] * y[i + l];
    for (int l = 0; i < n; ++i, ++l) acc[l] += x[i] * y[i];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

}  // namespace pocket::cpu
