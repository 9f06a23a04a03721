#pragma once
// Pieces every llama-family forward pass shares, so that an architecture file only says
// how it differs.
#include "model/forward_inputs.hpp"

namespace pocket {

// Stores k and v of this batch in the layer's cache cells and attends over the first n_kv
// cells. q [head_dim_k, n_head, n_tokens] and k [head_dim_k, n_head_kv, n_tokens], both
// already rotated; v [head_dim_v * n_head_kv, n_tokens]. Returns [head_dim_v * n_head, n_tokens].
// p: the layer's scale (llama-family default 1/sqrt(head_dim_k)), soft-capping and sliding
// window (AttnParams::window over the causal mask); causal must stay 0.
Tensor* attention(Graph& g, const ForwardInputs& in, uint32_t layer, Tensor* q, Tensor* k, Tensor* v, const AttnParams& p);
Tensor* attention(Graph& g, const ForwardInputs& in, uint32_t layer, Tensor* q, Tensor* k, Tensor* v);

// The experts of a mixture-of-experts feed-forward (SwiGLU experts, stacked in 3-D tensors).
struct MoeWeights {
    Tensor* gate_inp;   // [n_embd, n_expert]: the router
    Tensor* gate_exps;  // [n_embd, n_ff_exp, n_expert]
    Tensor* up_exps;    // [n_embd, n_ff_exp, n_expert]
    Tensor* down_exps;  // [n_ff_exp, n_embd, n_expert]
};
// blk.<layer>.ffn_{gate_inp,gate_exps,up_exps,down_exps}.weight, checked against these shapes.
MoeWeights moe_weights(const Model& m, uint32_t layer, int64_t n_embd, int64_t n_ff_exp, int64_t n_expert);

// Mixture-of-experts feed-forward (qwen3moe, Mixtral): router softmax over all experts, the
// n_used most probable, their probabilities renormalised to sum to 1, and the weighted sum of
// those experts' SwiGLU outputs. h [n_embd, n_tokens] -> [n_embd, n_tokens].
Tensor* moe_ffn(Graph& g, Tensor* h, const MoeWeights& w, uint32_t n_used);

// Keeps only the batch rows whose logits are wanted: x [n, n_tokens] -> [n, n_out].
Tensor* output_rows(Graph& g, const ForwardInputs& in, Tensor* x);

// Attention as separate ops, llama.cpp's path without flash attention (-fa off): scores
// K^T q (mul_mat), soft_max with scale, soft-capping, mask and window, then V (mul_mat).
// The same operands and result as Graph::flash_attn: q [hd_k, n_head, n_q], k [hd_k,
// n_head_kv, n_kv], v [hd_v, n_head_kv, n_kv] -> [hd_v, n_head, n_q].
Tensor* attention_ops(Graph& g, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, const AttnParams& p);

// [n_embd, n_tokens] -> [head_dim, n_heads, n_tokens]
Tensor* split_heads(Graph& g, Tensor* x, uint32_t head_dim);

}  // namespace pocket
