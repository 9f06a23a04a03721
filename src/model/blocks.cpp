#include "model/blocks.hpp"

#include "model/kv_cache.hpp"

#include <cmath>

namespace pocket {

Tensor* split_heads(Graph& g, Tensor* x, uint32_t head_dim) {
    if (!x->is_contiguous()) x = g.cont(x);
    return g.reshape(x, {head_dim, x->ne[0] / head_dim, x->ne[1], 1});
}

Tensor* attention(Graph& g, const ForwardInputs& in, uint32_t layer, Tensor* q, Tensor* k, Tensor* v) {
    return attention(g, in, layer, q, k, v, {.scale = 1.0f / std::sqrt(static_cast<float>(in.hp.head_dim_k))});
}

Tensor* attention(Graph& g, const ForwardInputs& in, uint32_t layer, Tensor* q, Tensor* k, Tensor* v, const AttnParams& p) {
    const HParams& hp = in.hp;
    Tensor& k_cache = in.cache.k(layer);
    Tensor& v_cache = in.cache.v(layer);
    // The cache rows are written through an input: the graph stays valid as n_past moves.
    if (!k->is_contiguous()) k = g.cont(k);
    if (!v->is_contiguous()) v = g.cont(v);
    Tensor* k_written = g.set_rows(&k_cache, g.reshape(k, {hp.n_embd_k_gqa(), in.n_tokens, 1, 1}), in.kv_rows);
    Tensor* v_written = g.set_rows(&v_cache, v, in.kv_rows);
    const size_t k_head = ggml_row_bytes(k_cache.type, hp.head_dim_k).value();
    const size_t v_head = ggml_row_bytes(v_cache.type, hp.head_dim_v).value();
    Tensor* keys = g.view_3d(k_written, hp.head_dim_k, hp.n_head_kv, in.n_kv, k_head, k_cache.nb[1], 0);
    Tensor* values = g.view_3d(v_written, hp.head_dim_v, hp.n_head_kv, in.n_kv, v_head, v_cache.nb[1], 0);
    Tensor* out = g.flash_attn(q, keys, values, in.kq_mask, p);  // [head_dim_v, n_head, n_tokens]
    return g.reshape(out, {hp.head_dim_v * hp.n_head, in.n_tokens, 1, 1});
}

Tensor* output_rows(Graph& g, const ForwardInputs& in, Tensor* x) {
    if (in.n_out == in.n_tokens) return x;
    return g.get_rows(x, in.out_rows);
}

}  // namespace pocket
