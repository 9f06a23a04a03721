// qwen3: qwen2 without the q/k/v biases, plus a per-head RMSNorm of Q and K (after the
// projection, before RoPE) that keeps the attention logits in range without biases. The
// head size comes from key_length: n_head * head_dim need not equal n_embd. NEOX rope.
// Tied output when the file has no output.weight.
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include <vector>

namespace pocket {
namespace {

struct Qwen3Layer {
    Tensor* attn_norm;  // [n_embd]
    Tensor* wq;         // [n_embd, n_head * head_dim]
    Tensor* wk;         // [n_embd, n_head_kv * head_dim]
    Tensor* wv;         // [n_embd, n_head_kv * head_dim]
    Tensor* q_norm;     // [head_dim]: one weight shared by every head
    Tensor* k_norm;     // [head_dim]
    Tensor* wo;         // [n_head * head_dim, n_embd]
    Tensor* ffn_norm;   // [n_embd]
    Tensor* w_gate;     // [n_embd, n_ff]
    Tensor* w_up;       // [n_embd, n_ff]
    Tensor* w_down;     // [n_ff, n_embd]
};

class Qwen3 final : public Architecture {
public:
    explicit Qwen3(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        const int64_t d = hp.n_embd, hd = hp.head_dim_k, q = hp.n_head * hd, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_q.weight", {d, q}),
                               m.weight(b + "attn_k.weight", {d, kv}), m.weight(b + "attn_v.weight", {d, vv}),
                               m.weight(b + "attn_q_norm.weight", {hd}), m.weight(b + "attn_k_norm.weight", {hd}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}),
                               m.weight(b + "ffn_norm.weight", {d}), m.weight(b + "ffn_gate.weight", {d, hp.n_ff}),
                               m.weight(b + "ffn_up.weight", {d, hp.n_ff}), m.weight(b + "ffn_down.weight", {hp.n_ff, d})});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
        output_ = m.optional_weight("output.weight", {d, hp.n_vocab});
        if (!output_) output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // tied: the output layer's copy
    }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        Tensor* x = g.get_rows(tok_embd_, in.ids);  // [n_embd, n_tokens]
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const Qwen3Layer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            // rms_norm works per row: on [head_dim, n_head, n_tokens] that is per head.
            Tensor* q = g.mul(g.rms_norm(split_heads(g, g.mul_mat(w.wq, h), hp.head_dim_k), hp.norm_eps), w.q_norm);
            Tensor* k = g.mul(g.rms_norm(split_heads(g, g.mul_mat(w.wk, h), hp.head_dim_k), hp.norm_eps), w.k_norm);
            Tensor* v = g.mul_mat(w.wv, h);
            x = g.add(x, g.mul_mat(w.wo, attention(g, in, l, g.rope(q, in.pos, hp.rope), g.rope(k, in.pos, hp.rope), v)));
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            x = g.add(x, g.mul_mat(w.w_down, g.swiglu(g.mul_mat(w.w_gate, h), g.mul_mat(w.w_up, h))));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        return g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_));
    }

private:
    HParams hp_;
    Tensor* tok_embd_;     // [n_embd, n_vocab]
    std::vector<Qwen3Layer> layers_;
    Tensor* output_norm_;  // [n_embd]
    Tensor* output_;       // [n_embd, n_vocab]
};

}  // namespace

std::unique_ptr<Architecture> make_qwen3(const Model& m) { return std::make_unique<Qwen3>(m); }

}  // namespace pocket
