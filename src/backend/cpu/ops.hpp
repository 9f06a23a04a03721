#pragma once
// The CPU op implementations, one file each under ops/. Every op is called on all threads
// of the pool with the same node; each thread computes its own rows.
#include "backend/cpu/op_context.hpp"

namespace pocket::cpu {

void op_get_rows(const OpContext& ctx, Tensor& dst);
void op_add(const OpContext& ctx, Tensor& dst);
void op_mul(const OpContext& ctx, Tensor& dst);
void op_scale(const OpContext& ctx, Tensor& dst);
void op_silu(const OpContext& ctx, Tensor& dst);
void op_gelu(const OpContext& ctx, Tensor& dst);
void op_tanh(const OpContext& ctx, Tensor& dst);
void op_swiglu(const OpContext& ctx, Tensor& dst);
void op_geglu(const OpContext& ctx, Tensor& dst);
void op_rms_norm(const OpContext& ctx, Tensor& dst);
void op_norm(const OpContext& ctx, Tensor& dst);
void op_soft_max(const OpContext& ctx, Tensor& dst);
void op_mul_mat(const OpContext& ctx, Tensor& dst);
void op_mul_mat_id(const OpContext& ctx, Tensor& dst);
void op_top_k(const OpContext& ctx, Tensor& dst);
void op_rope(const OpContext& ctx, Tensor& dst);
void op_rope_shift(const OpContext& ctx, Tensor& dst);
void op_cont(const OpContext& ctx, Tensor& dst);
void op_cpy(const OpContext& ctx, Tensor& dst);
void op_set_rows(const OpContext& ctx, Tensor& dst);
void op_concat(const OpContext& ctx, Tensor& dst);
void op_flash_attn(const OpContext& ctx, Tensor& dst);

// Scratch bytes an op needs with nth threads (0 for most).
size_t mul_mat_work_size(const Tensor& node, int nth);
size_t mul_mat_id_work_size(const Tensor& node, int nth);
size_t soft_max_work_size(const Tensor& node, int nth);
size_t copy_work_size(const Tensor& node, int nth);
size_t rope_work_size(const Tensor& node, int nth);
size_t flash_attn_work_size(const Tensor& node, int nth);

// Whether the CPU backend can run this node (types and layouts).
bool mul_mat_supported(const Tensor& node);  // also mul_mat_id's

}  // namespace pocket::cpu
