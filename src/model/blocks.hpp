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

// Keeps only the batch rows whose logits are wanted: x [n, n_tokens] -> [n, n_out].
Tensor* output_rows(Graph& g, const ForwardInputs& in, Tensor* x);

// [n_embd, n_tokens] -> [head_dim, n_heads, n_tokens]
Tensor* split_heads(Graph& g, Tensor* x, uint32_t head_dim);

}  // namespace pocket
