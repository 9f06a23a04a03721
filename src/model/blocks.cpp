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
    Tensor* out = in.flash_attn ? g.flash_attn(q, keys, values, in.kq_mask, p)     // [head_dim_v, n_head, n_tokens]
                                : attention_ops(g, q, keys, values, in.kq_mask, p);
    return g.reshape(out, {hp.head_dim_v * hp.n_head, in.n_tokens, 1, 1});
}

Tensor* attention_ops(Graph& g, Tensor* q, Tensor* k, Tensor* v, Tensor* mask, const AttnParams& p) {
    // Heads outermost: mul_mat pairs q head h with k head h / (n_head / n_head_kv).
    Tensor* kh = g.permute(k, 0, 2, 1, 3);                                  // [hd_k, n_kv, n_head_kv]
    Tensor* qh = g.permute(q, 0, 2, 1, 3);                                  // [hd_k, n_q, n_head]
    Tensor* kq = g.mul_mat(kh, qh);                                         // [n_kv, n_q, n_head]
    kq = g.soft_max(kq, mask, {.scale = p.scale, .softcap = p.softcap, .causal = p.causal, .window = p.window});
    Tensor* vt = g.cont(g.permute(v, 1, 2, 0, 3));                          // [n_kv, hd_v, n_head_kv]
    Tensor* kqv = g.mul_mat(vt, kq);                                        // [hd_v, n_q, n_head]
    return g.cont(g.permute(kqv, 0, 2, 1, 3));                              // [hd_v, n_head, n_q]
}

MoeWeights moe_weights(const Model& m, uint32_t layer, int64_t n_embd, int64_t n_ff_exp, int64_t n_expert) {
    const std::string b = "blk." + std::to_string(layer) + ".";
    return {m.weight(b + "ffn_gate_inp.weight", {n_embd, n_expert}), m.weight(b + "ffn_gate_exps.weight", {n_embd, n_ff_exp, n_expert}),
            m.weight(b + "ffn_up_exps.weight", {n_embd, n_ff_exp, n_expert}),
            m.weight(b + "ffn_down_exps.weight", {n_ff_exp, n_embd, n_expert})};
}

Tensor* moe_ffn(Graph& g, Tensor* h, const MoeWeights& w, uint32_t n_used) {
    const int64_t n_embd = h->ne[0], n_tokens = h->ne[1], n_expert = w.gate_inp->ne[1], k = n_used;
    Tensor* logits = g.mul_mat(w.gate_inp, h);  // [n_expert, n_tokens]
    Tensor* ids = g.top_k(g.soft_max(logits), k);  // [k, n_tokens]: the most probable experts
    // Probabilities renormalised over the chosen k are a softmax over the chosen logits.
    Tensor* chosen = g.get_rows(g.reshape(logits, {1, n_expert, n_tokens, 1}), ids);  // [1, k, n_tokens]
    Tensor* weights = g.soft_max(g.reshape(chosen, {k, n_tokens, 1, 1}));           // [k, n_tokens]
    if (!h->is_contiguous()) h = g.cont(h);
    Tensor* x = g.reshape(h, {n_embd, 1, n_tokens, 1});
    Tensor* act = g.swiglu(g.mul_mat_id(w.gate_exps, x, ids), g.mul_mat_id(w.up_exps, x, ids));  // [n_ff_exp, k, n_tokens]
    Tensor* out = g.mul(g.mul_mat_id(w.down_exps, act, ids), g.reshape(weights, {1, k, n_tokens, 1}));  // [n_embd, k, n_tokens]
    // Sum over the k experts, in slot order.
    Tensor* sum = g.view_2d(out, n_embd, n_tokens, out->nb[2], 0);
    for (int64_t i = 1; i < k; ++i) sum = g.add(sum, g.view_2d(out, n_embd, n_tokens, out->nb[2], static_cast<size_t>(i) * out->nb[1]));
    return k == 1 ? g.cont(sum) : sum;
}

Tensor* output_rows(Graph& g, const ForwardInputs& in, Tensor* x) {
    if (in.n_out == in.n_tokens) return x;
    return g.get_rows(x, in.out_rows);
}

}  // namespace pocket
