// gemma: llama with the embeddings scaled by sqrt(n_embd), a GELU-gated feed-forward
// (GEGLU, tanh GELU), rotary attention over halves, and always-tied output. Its norm weights
// are stored with the +1 already added (as llama.cpp's converter writes them): plain mul.
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include <cmath>
#include <vector>

namespace pocket {
namespace {

struct GemmaLayer {
    Tensor* attn_norm;  // [n_embd]
    Tensor* wq;         // [n_embd, n_head * head_dim]
    Tensor* wk;         // [n_embd, n_head_kv * head_dim]
    Tensor* wv;         // [n_embd, n_head_kv * head_dim]
    Tensor* wo;         // [n_head * head_dim, n_embd]
    Tensor* ffn_norm;   // [n_embd]
    Tensor* w_gate;     // [n_embd, n_ff]
    Tensor* w_up;       // [n_embd, n_ff]
    Tensor* w_down;     // [n_ff, n_embd]
};

class Gemma final : public Architecture {
public:
    explicit Gemma(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        const int64_t d = hp.n_embd, q = hp.n_head * hp.head_dim_k, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // tied: the output layer's copy
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_q.weight", {d, q}),
                               m.weight(b + "attn_k.weight", {d, kv}), m.weight(b + "attn_v.weight", {d, vv}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}),
                               m.weight(b + "ffn_norm.weight", {d}), m.weight(b + "ffn_gate.weight", {d, hp.n_ff}),
                               m.weight(b + "ffn_up.weight", {d, hp.n_ff}), m.weight(b + "ffn_down.weight", {hp.n_ff, d})});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
    }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        Tensor* x = g.scale(g.get_rows(tok_embd_, in.ids), std::sqrt(static_cast<float>(hp.n_embd)));
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const GemmaLayer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            Tensor* q = g.rope(split_heads(g, g.mul_mat(w.wq, h), hp.head_dim_k), in.pos, hp.rope);
            Tensor* k = g.rope(split_heads(g, g.mul_mat(w.wk, h), hp.head_dim_k), in.pos, hp.rope);
            Tensor* v = g.mul_mat(w.wv, h);
            x = g.add(x, g.mul_mat(w.wo, attention(g, in, l, q, k, v)));
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            x = g.add(x, g.mul_mat(w.w_down, g.geglu(g.mul_mat(w.w_gate, h), g.mul_mat(w.w_up, h))));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        return g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_));
    }

private:
    HParams hp_;
    Tensor* tok_embd_;     // [n_embd, n_vocab]
    Tensor* output_;       // [n_embd, n_vocab]: token_embd.weight again, on the output's device
    std::vector<GemmaLayer> layers_;
    Tensor* output_norm_;  // [n_embd]
};

}  // namespace

std::unique_ptr<Architecture> make_gemma(const Model& m) { return std::make_unique<Gemma>(m); }

}  // namespace pocket
