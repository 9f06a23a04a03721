#pragma once
// Shared by the CUDA kernels of elementwise.cu, norm.cu, soft_max.cu, rope.cu, copy.cu,
// flash_attn.cu, top_k.cu: operand geometry passed by value, f16 access, and the fixed-order
// workgroup reductions of the Vulkan shaders (reduce.glsl, flash_attn.comp's tree()).
#include "pocket/tensor.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace pocket::cuda::kern {

// An operand's shape and byte strides, by value for a kernel's arguments.
struct Geom {
    int64_t ne[4];
    int64_t nb[4];
};

inline Geom geom(const Tensor* t) {
    Geom g{};
    for (int d = 0; d < 4; ++d) {
        g.ne[d] = t ? t->ne[d] : 1;
        g.nb[d] = t ? static_cast<int64_t>(t->nb[d]) : 0;
    }
    return g;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Blocks for n work items of `per` threads each (1-D grid: gridDim.x reaches 2^31 - 1).
inline unsigned blocks_for(int64_t n, int64_t per) { return static_cast<unsigned>(ceil_div(n, per)); }

__device__ __forceinline__ float ld_f32(const void* base, int64_t byte) {
    return *reinterpret_cast<const float*>(static_cast<const uint8_t*>(base) + byte);
}
__device__ __forceinline__ float ld_f16(const void* base, int64_t byte) {
    return __half2float(*reinterpret_cast<const __half*>(static_cast<const uint8_t*>(base) + byte));
}
__device__ __forceinline__ int32_t ld_i32(const void* base, int64_t byte) {
    return *reinterpret_cast<const int32_t*>(static_cast<const uint8_t*>(base) + byte);
}
__device__ __forceinline__ void st_f32(void* base, int64_t byte, float v) {
    *reinterpret_cast<float*>(static_cast<uint8_t*>(base) + byte) = v;
}
// f32 -> f16 rounding to nearest even, as the CPU's f32_to_fp16.
__device__ __forceinline__ void st_f16(void* base, int64_t byte, float v) {
    *reinterpret_cast<__half*>(static_cast<uint8_t*>(base) + byte) = __float2half_rn(v);
}

__device__ __forceinline__ bool is_neg_inf(float x) { return isinf(x) && x < 0.0f; }

// A workgroup-wide sum or max of one value per thread in reduce.glsl's fixed tree: stride
// WG/2 (t += t + WG/2), ..., 1. Strides >= 32 go through shared memory; the last five as
// xor butterflies inside warp 0, whose lanes below each stride make the same additions as
// the shared-memory tree, so the result is the tree's bits. Every thread of the block must
// call it; all get the result. `red` is WG floats of shared memory.
template <int WG, bool kMax> __device__ __forceinline__ float block_reduce(float v, float* red) {
    static_assert(WG >= 32 && (WG & (WG - 1)) == 0, "WG must be a power of two >= 32");
    const int t = threadIdx.x;
    __syncthreads();  // red may still be read by a previous reduction
    red[t] = v;
    __syncthreads();
#pragma unroll
    for (int s = WG / 2; s >= 32; s >>= 1) {
        if (t < s) red[t] = kMax ? fmaxf(red[t], red[t + s]) : red[t] + red[t + s];
        __syncthreads();
    }
    if (t < 32) {
        float x = red[t];
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
            const float y = __shfl_xor_sync(0xffffffffu, x, s);
            x = kMax ? fmaxf(x, y) : x + y;
        }
        if (t == 0) red[0] = x;
    }
    __syncthreads();
    return red[0];
}

// The same tree over the 32 lanes of one warp (flash_attn.comp's tree()); every lane gets
// lane 0's result.
template <bool kMax> __device__ __forceinline__ float warp_reduce(float x) {
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        const float y = __shfl_xor_sync(0xffffffffu, x, s);
        x = kMax ? fmaxf(x, y) : x + y;
    }
    return __shfl_sync(0xffffffffu, x, 0);
}

}  // namespace pocket::cuda::kern
