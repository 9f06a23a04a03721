// soft_max over each row, as soft_max.comp: x*scale, softcap (cap*tanh(x/cap) when > 0),
// + mask (f32, row i1 of src1, when present), the causal rule with window; a fully masked row
// gives zeros. One block of 256 threads per row; the result row is the scratch.
// Beyond the Vulkan shader: a window without the causal rule over a mask (the row's position
// is the last column its mask row lets through, as the CPU's op).
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

constexpr int kWG = 256;

__global__ void __launch_bounds__(kWG) soft_max_kernel(const void* src, Geom ga, const void* mask, Geom gm, void* dst, Geom gd,
                                                       float scale, float softcap, int causal, int window) {
    __shared__ float red[kWG];
    const int64_t r = blockIdx.x;
    const int t = threadIdx.x;
    const int64_t i1 = r % gd.ne[1], i2 = (r / gd.ne[1]) % gd.ne[2], i3 = r / (gd.ne[1] * gd.ne[2]);
    const int64_t a = i1 * ga.nb[1] + i2 * ga.nb[2] + i3 * ga.nb[3];
    const int64_t d = i1 * gd.nb[1] + i2 * gd.nb[2] + i3 * gd.nb[3];
    const int64_t m = i1 * gm.nb[1];
    const int64_t n = gd.ne[0];
    int64_t pos = n - gd.ne[1] + i1;
    const bool mask_window = !causal && window > 0 && mask != nullptr;
    if (mask_window) {
        // The last column the mask lets through (the CPU's scan from the end stops at 0).
        float last = -1.0f;
        for (int64_t k = t; k < n; k += kWG)
            if (!kern::is_neg_inf(kern::ld_f32(mask, m + k * gm.nb[0]))) last = fmaxf(last, static_cast<float>(k));
        last = kern::block_reduce<kWG, true>(last, red);
        pos = last > 0.0f ? static_cast<int64_t>(last) : 0;
    }
    const float ninf = -INFINITY;
    float mx = ninf;
    for (int64_t k = t; k < n; k += kWG) {
        // Products rounded on their own (no FMA contraction with the mask's addition), as the CPU.
        float v = __fmul_rn(kern::ld_f32(src, a + k * ga.nb[0]), scale);
        if (softcap > 0.0f) v = __fmul_rn(softcap, tanhf(v / softcap));
        if (mask) v += kern::ld_f32(mask, m + k * gm.nb[0]);
        if (causal && (k > pos || (window > 0 && k <= pos - window))) v = ninf;
        if (mask_window && k <= pos - window) v = ninf;
        kern::st_f32(dst, d + k * gd.nb[0], v);
        mx = fmaxf(mx, v);
    }
    mx = kern::block_reduce<kWG, true>(mx, red);
    if (kern::is_neg_inf(mx)) {
        for (int64_t k = t; k < n; k += kWG) kern::st_f32(dst, d + k * gd.nb[0], 0.0f);
        return;
    }
    float s = 0.0f;
    for (int64_t k = t; k < n; k += kWG) {
        const float e = expf(kern::ld_f32(dst, d + k * gd.nb[0]) - mx);
        kern::st_f32(dst, d + k * gd.nb[0], e);
        s += e;
    }
    const float inv = 1.0f / kern::block_reduce<kWG, false>(s, red);
    for (int64_t k = t; k < n; k += kWG) kern::st_f32(dst, d + k * gd.nb[0], kern::ld_f32(dst, d + k * gd.nb[0]) * inv);
}

}  // namespace

void soft_max(const Tensor& node, const Launch& l) {
    const int64_t rows = node.nrows();
    if (rows <= 0 || node.ne[0] <= 0) return;
    const auto p = node.params<SoftMaxParams>();
    const Tensor* mask = node.src[1];
    soft_max_kernel<<<static_cast<unsigned>(rows), kWG, 0, l.stream>>>(node.src[0]->data, kern::geom(node.src[0]),
                                                                       mask ? mask->data : nullptr, kern::geom(mask), node.data,
                                                                       kern::geom(&node), p.scale, p.softcap, p.causal, p.window);
}

}  // namespace pocket::cuda
