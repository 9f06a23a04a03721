// rms_norm (x / sqrt(mean(x^2) + eps)) and norm (centred first), one block of 256 threads
// per row, as norm.comp: thread t sums elements t, t + 256, ... in order, then the fixed tree.
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

constexpr int kWG = 256;

template <bool kRms> __global__ void __launch_bounds__(kWG) norm_kernel(const void* src, Geom ga, void* dst, Geom gd, float eps) {
    __shared__ float red[kWG];
    const int64_t r = blockIdx.x;
    const int t = threadIdx.x;
    const int64_t i1 = r % gd.ne[1], i2 = (r / gd.ne[1]) % gd.ne[2], i3 = r / (gd.ne[1] * gd.ne[2]);
    const int64_t a = i1 * ga.nb[1] + i2 * ga.nb[2] + i3 * ga.nb[3];
    const int64_t d = i1 * gd.nb[1] + i2 * gd.nb[2] + i3 * gd.nb[3];
    const int64_t n = gd.ne[0];
    float mean = 0.0f;
    if constexpr (!kRms) {
        float s = 0.0f;
        for (int64_t k = t; k < n; k += kWG) s += kern::ld_f32(src, a + k * ga.nb[0]);
        mean = kern::block_reduce<kWG, false>(s, red) / static_cast<float>(n);
    }
    float s2 = 0.0f;
    for (int64_t k = t; k < n; k += kWG) {
        const float v = kern::ld_f32(src, a + k * ga.nb[0]) - mean;
        s2 = fmaf(v, v, s2);
    }
    const float scale = 1.0f / sqrtf(kern::block_reduce<kWG, false>(s2, red) / static_cast<float>(n) + eps);
    for (int64_t k = t; k < n; k += kWG) kern::st_f32(dst, d + k * gd.nb[0], (kern::ld_f32(src, a + k * ga.nb[0]) - mean) * scale);
}

}  // namespace

void norm(const Tensor& node, const Launch& l) {
    const int64_t rows = node.nrows();
    if (rows <= 0 || node.ne[0] <= 0) return;
    const float eps = node.params<float>();
    const unsigned blocks = static_cast<unsigned>(rows);
    switch (node.op) {
        case Op::rms_norm:
            norm_kernel<true><<<blocks, kWG, 0, l.stream>>>(node.src[0]->data, kern::geom(node.src[0]), node.data, kern::geom(&node), eps);
            break;
        case Op::norm:
            norm_kernel<false><<<blocks, kWG, 0, l.stream>>>(node.src[0]->data, kern::geom(node.src[0]), node.data, kern::geom(&node), eps);
            break;
        default: break;
    }
}

}  // namespace pocket::cuda
