// phi3: llama with the q, k and v projections fused into one matrix (rows [Q; K; V]) and
// the gate and up projections fused likewise ([gate; up]); rotary attention over halves.
// Phi-3-mini's files store attention.sliding_window = 2047, which llama.cpp ignores (its Phi
// SWA is disabled): every layer attends to the whole context here too.
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include <vector>

namespace pocket {
namespace {

struct Phi3Layer {
    Tensor* attn_norm;  // [n_embd]
    Tensor* wqkv;       // [n_embd, n_head * head_dim + 2 * n_head_kv * head_dim]
    Tensor* wo;         // [n_head * head_dim, n_embd]
    Tensor* ffn_norm;   // [n_embd]
    Tensor* w_gate_up;  // [n_embd, 2 * n_ff]
    Tensor* w_down;     // [n_ff, n_embd]
};

class Phi3 final : public Architecture {
public:
    explicit Phi3(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        const int64_t d = hp.n_embd, q = hp.n_head * hp.head_dim_k, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_qkv.weight", {d, q + kv + vv}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}),
                               m.weight(b + "ffn_norm.weight", {d}), m.weight(b + "ffn_up.weight", {d, 2 * int64_t{hp.n_ff}}),
                               m.weight(b + "ffn_down.weight", {hp.n_ff, d})});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
        output_ = m.optional_weight("output.weight", {d, hp.n_vocab});
        if (!output_) output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // tied: the output layer's copy
    }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        const int64_t nq = hp.n_head * hp.head_dim_k, nk = hp.n_embd_k_gqa(), nv = hp.n_embd_v_gqa(), ff = hp.n_ff;
        Tensor* x = g.get_rows(tok_embd_, in.ids);  // [n_embd, n_tokens]
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const Phi3Layer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            Tensor* qkv = g.mul_mat(w.wqkv, h);  // [nq + nk + nv, n_tokens]
            const size_t f = sizeof(float);
            Tensor* q = g.rope(split_heads(g, g.view_2d(qkv, nq, in.n_tokens, qkv->nb[1], 0), hp.head_dim_k), in.pos, hp.rope);
            Tensor* k = g.rope(split_heads(g, g.view_2d(qkv, nk, in.n_tokens, qkv->nb[1], nq * f), hp.head_dim_k), in.pos, hp.rope);
            Tensor* v = g.view_2d(qkv, nv, in.n_tokens, qkv->nb[1], (nq + nk) * f);
            x = g.add(x, g.mul_mat(w.wo, attention(g, in, l, q, k, v)));
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            Tensor* gate_up = g.mul_mat(w.w_gate_up, h);  // [2 * n_ff, n_tokens]
            Tensor* gate = g.view_2d(gate_up, ff, in.n_tokens, gate_up->nb[1], 0);
            Tensor* up = g.view_2d(gate_up, ff, in.n_tokens, gate_up->nb[1], ff * f);
            x = g.add(x, g.mul_mat(w.w_down, g.swiglu(gate, up)));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        return g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_));
    }

private:
    HParams hp_;
    Tensor* tok_embd_;     // [n_embd, n_vocab]
    std::vector<Phi3Layer> layers_;
    Tensor* output_norm_;  // [n_embd]
    Tensor* output_;       // [n_embd, n_vocab]
};

}  // namespace

std::unique_ptr<Architecture> make_phi3(const Model& m) { return std::make_unique<Phi3>(m); }

}  // namespace pocket
