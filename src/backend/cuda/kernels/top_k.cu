// top_k, as top_k.comp: the indices of the k largest values of each row of src0 (f32),
// largest first, ties to the lowest index (the CPU's order), as int32 into dst [k, rows...].
// One thread takes a row and picks k times: each pick is the best value ordered after the
// previous one (smaller, or equal with a higher index).
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

constexpr int kWG = 64;

__global__ void top_k_kernel(const void* src, Geom ga, void* dst, Geom gd) {
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    const int64_t n = ga.ne[0], ne1 = ga.ne[1], ne2 = ga.ne[2];
    if (row >= ne1 * ne2 * ga.ne[3]) return;
    const int64_t i1 = row % ne1, i2 = (row / ne1) % ne2, i3 = row / (ne1 * ne2);
    const int64_t s = i1 * ga.nb[1] + i2 * ga.nb[2] + i3 * ga.nb[3];
    const int64_t at = i1 * gd.nb[1] + i2 * gd.nb[2] + i3 * gd.nb[3];
    float prev_v = 0.0f;
    int64_t prev_j = -1;
    for (int64_t r = 0; r < gd.ne[0]; ++r) {
        int64_t best_j = -1;
        float best_v = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
            const float v = kern::ld_f32(src, s + j * ga.nb[0]);
            const bool after = prev_j < 0 || v < prev_v || (v == prev_v && j > prev_j);
            if (after && (best_j < 0 || v > best_v)) {
                best_j = j;
                best_v = v;
            }
        }
        *reinterpret_cast<int32_t*>(static_cast<uint8_t*>(dst) + at + r * gd.nb[0]) = static_cast<int32_t>(best_j);
        prev_v = best_v;
        prev_j = best_j;
    }
}

}  // namespace

void top_k(const Tensor& node, const Launch& l) {
    const Tensor* a = node.src[0];
    const int64_t rows = a->nrows();
    if (rows <= 0 || node.ne[0] <= 0) return;
    top_k_kernel<<<kern::blocks_for(rows, kWG), kWG, 0, l.stream>>>(a->data, kern::geom(a), node.data, kern::geom(&node));
}

}  // namespace pocket::cuda
