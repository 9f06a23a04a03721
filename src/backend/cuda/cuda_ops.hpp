#pragma once
// Internal: the CUDA backend's kernels, one launcher per op family (kernels/*.cu). A launcher
// enqueues the node's work on l.stream and nothing else: no allocation, no synchronisation,
// no host reads of device memory (the backend records the launches into a CUDA graph and
// replays it). node.data and every operand's data are device addresses; shapes, strides
// (bytes) and parameters mean what they mean to the CPU's ops (src/backend/cpu/ops/).
//
// Each output is computed in an order fixed by its own operands' shapes alone, never by the
// batch it sits in nor by timing (no atomics): a token's logits are bitwise the same whatever
// the ubatch, and run after run. The backend calls a launcher only for a node that
// supports() (cuda_supports.cpp) accepted.
#include "pocket/tensor.hpp"

#include <cuda_runtime.h>

namespace pocket::cuda {

struct Launch {
    cudaStream_t stream = nullptr;
};

void get_rows(const Tensor& node, const Launch& l);    // get_rows.cu: any weight type -> f32
void binary(const Tensor& node, const Launch& l);      // elementwise.cu: add, mul, swiglu, geglu
void unary(const Tensor& node, const Launch& l);       // elementwise.cu: scale, silu, gelu, tanh
void norm(const Tensor& node, const Launch& l);        // norm.cu: rms_norm, norm
void soft_max(const Tensor& node, const Launch& l);    // soft_max.cu
void mul_mat(const Tensor& node, const Launch& l);     // mul_mat.cu
void mul_mat_id(const Tensor& node, const Launch& l);  // mul_mat.cu
void top_k(const Tensor& node, const Launch& l);       // top_k.cu
void rope(const Tensor& node, const Launch& l);        // rope.cu: rope, rope_shift
void copy(const Tensor& node, const Launch& l);        // copy.cu: cont, cpy
void set_rows(const Tensor& node, const Launch& l);    // copy.cu
void concat(const Tensor& node, const Launch& l);      // copy.cu
void flash_attn(const Tensor& node, const Launch& l);  // flash_attn.cu

}  // namespace pocket::cuda
