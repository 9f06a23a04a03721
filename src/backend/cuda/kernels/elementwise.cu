// Element-wise ops (binary.comp, unary.comp, elementwise.glsl): one thread per element of
// the f32 result, 256 per block. Operands are f32 with any byte strides; b of a binary op
// broadcasts (b.ne[i] divides a.ne[i]).
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

enum class Bin : int { add, mul, swiglu, geglu };
enum class Un : int { scale, silu, gelu, tanh };

constexpr int kWG = 256;

__device__ __forceinline__ float silu(float x) { return x / (1.0f + expf(-x)); }

// ggml's tanh approximation, as the CPU's.
__device__ __forceinline__ float gelu(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoef = 0.044715f;
    return 0.5f * x * (1.0f + tanhf(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

// The element's coordinates in dst (ne), false past the end.
__device__ __forceinline__ bool element_coords(const Geom& d, int64_t i[4]) {
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    if (idx >= d.ne[0] * d.ne[1] * d.ne[2] * d.ne[3]) return false;
    i[0] = idx % d.ne[0];
    i[1] = (idx / d.ne[0]) % d.ne[1];
    i[2] = (idx / (d.ne[0] * d.ne[1])) % d.ne[2];
    i[3] = idx / (d.ne[0] * d.ne[1] * d.ne[2]);
    return true;
}

__device__ __forceinline__ int64_t byte_of(const int64_t i[4], const Geom& g) {
    return i[0] * g.nb[0] + i[1] * g.nb[1] + i[2] * g.nb[2] + i[3] * g.nb[3];
}

template <Bin kOp> __global__ void binary_kernel(const void* a, Geom ga, const void* b, Geom gb, void* dst, Geom gd) {
    int64_t i[4];
    if (!element_coords(gd, i)) return;
    const int64_t ib[4] = {i[0] % gb.ne[0], i[1] % gb.ne[1], i[2] % gb.ne[2], i[3] % gb.ne[3]};
    const float x = kern::ld_f32(a, byte_of(i, ga));
    const float y = kern::ld_f32(b, byte_of(ib, gb));
    float r;
    if constexpr (kOp == Bin::add) r = x + y;
    else if constexpr (kOp == Bin::mul) r = x * y;
    else if constexpr (kOp == Bin::swiglu) r = silu(x) * y;
    else r = gelu(x) * y;
    kern::st_f32(dst, byte_of(i, gd), r);
}

template <Un kOp> __global__ void unary_kernel(const void* a, Geom ga, void* dst, Geom gd, float s) {
    int64_t i[4];
    if (!element_coords(gd, i)) return;
    const float x = kern::ld_f32(a, byte_of(i, ga));
    float r;
    if constexpr (kOp == Un::scale) r = x * s;
    else if constexpr (kOp == Un::silu) r = silu(x);
    else if constexpr (kOp == Un::gelu) r = gelu(x);
    else r = tanhf(x);
    kern::st_f32(dst, byte_of(i, gd), r);
}

template <Bin kOp> void launch_binary(const Tensor& node, const Launch& l, unsigned blocks) {
    binary_kernel<kOp><<<blocks, kWG, 0, l.stream>>>(node.src[0]->data, kern::geom(node.src[0]), node.src[1]->data,
                                                     kern::geom(node.src[1]), node.data, kern::geom(&node));
}

template <Un kOp> void launch_unary(const Tensor& node, const Launch& l, unsigned blocks, float s) {
    unary_kernel<kOp><<<blocks, kWG, 0, l.stream>>>(node.src[0]->data, kern::geom(node.src[0]), node.data, kern::geom(&node), s);
}

}  // namespace

void binary(const Tensor& node, const Launch& l) {
    const int64_t n = node.nelements();
    if (n <= 0) return;
    const unsigned blocks = kern::blocks_for(n, kWG);
    switch (node.op) {
        case Op::add: launch_binary<Bin::add>(node, l, blocks); break;
        case Op::mul: launch_binary<Bin::mul>(node, l, blocks); break;
        case Op::swiglu: launch_binary<Bin::swiglu>(node, l, blocks); break;
        case Op::geglu: launch_binary<Bin::geglu>(node, l, blocks); break;
        default: break;
    }
}

void unary(const Tensor& node, const Launch& l) {
    const int64_t n = node.nelements();
    if (n <= 0) return;
    const unsigned blocks = kern::blocks_for(n, kWG);
    switch (node.op) {
        case Op::scale: launch_unary<Un::scale>(node, l, blocks, node.params<float>()); break;
        case Op::silu: launch_unary<Un::silu>(node, l, blocks, 0.0f); break;
        case Op::gelu: launch_unary<Un::gelu>(node, l, blocks, 0.0f); break;
        case Op::tanh: launch_unary<Un::tanh>(node, l, blocks, 0.0f); break;
        default: break;
    }
}

}  // namespace pocket::cuda
