// gemma2: gemma with soft-capped attention logits (50 tanh(s / 50)) and final logits
// (30 tanh(z / 30)), an RMSNorm after the attention and after the feed-forward (before each
// residual add), and layers alternating a sliding window (even layers) with global attention.
// Q is scaled by 1/sqrt(head_dim) before Q.K, as llama.cpp does (the 27B model, 46 layers,
// uses 1/sqrt(n_embd / n_head) instead: its query_pre_attn_scalar, which no key stores).
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include <cmath>
#include <vector>

namespace pocket {
namespace {

struct Gemma2Layer {
    Tensor* attn_norm;       // [n_embd]
    Tensor* wq;              // [n_embd, n_head * head_dim]
    Tensor* wk;              // [n_embd, n_head_kv * head_dim]
    Tensor* wv;              // [n_embd, n_head_kv * head_dim]
    Tensor* wo;              // [n_head * head_dim, n_embd]
    Tensor* post_attn_norm;  // [n_embd]
    Tensor* ffn_norm;        // [n_embd]
    Tensor* w_gate;          // [n_embd, n_ff]
    Tensor* w_up;            // [n_embd, n_ff]
    Tensor* w_down;          // [n_ff, n_embd]
    Tensor* post_ffw_norm;   // [n_embd]
};

// cap * tanh(x / cap), in ggml's steps (scale, tanh, scale) so that the rounding is llama.cpp's.
Tensor* soft_cap(Graph& g, Tensor* x, float cap) { return g.scale(g.tanh(g.scale(x, 1.0f / cap)), cap); }

class Gemma2 final : public Architecture {
public:
    explicit Gemma2(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        const GgufFile& f = m.file();
        // llama.cpp's defaults when the keys are absent: both caps on, a 4096-cell window.
        attn_softcap_ = f.find_as<float>("gemma2.attn_logit_softcapping").value_or(50.0f);
        final_softcap_ = f.find_as<float>("gemma2.final_logit_softcapping").value_or(30.0f);
        window_ = hp.sliding_window ? hp.sliding_window : 4096;
        q_scale_ = 1.0f / std::sqrt(static_cast<float>(hp.n_layer == 46 ? hp.n_embd / hp.n_head : hp.head_dim_k));
        const int64_t d = hp.n_embd, q = hp.n_head * hp.head_dim_k, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // always tied
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_q.weight", {d, q}),
                               m.weight(b + "attn_k.weight", {d, kv}), m.weight(b + "attn_v.weight", {d, vv}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}),
                               m.weight(b + "post_attention_norm.weight", {d}), m.weight(b + "ffn_norm.weight", {d}),
                               m.weight(b + "ffn_gate.weight", {d, hp.n_ff}), m.weight(b + "ffn_up.weight", {d, hp.n_ff}),
                               m.weight(b + "ffn_down.weight", {hp.n_ff, d}), m.weight(b + "post_ffw_norm.weight", {d})});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
    }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        Tensor* x = g.scale(g.get_rows(tok_embd_, in.ids), std::sqrt(static_cast<float>(hp.n_embd)));
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const Gemma2Layer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            Tensor* q = g.rope(split_heads(g, g.mul_mat(w.wq, h), hp.head_dim_k), in.pos, hp.rope);
            Tensor* k = g.rope(split_heads(g, g.mul_mat(w.wk, h), hp.head_dim_k), in.pos, hp.rope);
            Tensor* v = g.mul_mat(w.wv, h);
            const AttnParams p{.scale = 1.0f, .softcap = attn_softcap_, .window = l % 2 == 0 ? static_cast<int32_t>(window_) : 0};
            Tensor* a = g.mul_mat(w.wo, attention(g, in, l, g.scale(q, q_scale_), k, v, p));
            x = g.add(x, g.mul(g.rms_norm(a, hp.norm_eps), w.post_attn_norm));
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            Tensor* f = g.mul_mat(w.w_down, g.geglu(g.mul_mat(w.w_gate, h), g.mul_mat(w.w_up, h)));
            x = g.add(x, g.mul(g.rms_norm(f, hp.norm_eps), w.post_ffw_norm));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        return soft_cap(g, g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_)), final_softcap_);
    }

private:
    HParams hp_;
    float attn_softcap_, final_softcap_, q_scale_;
    uint32_t window_;      // cells a sliding-window layer sees, its own included
    Tensor* tok_embd_;     // [n_embd, n_vocab]
    Tensor* output_;       // [n_embd, n_vocab]: token_embd.weight again, on the output's device
    std::vector<Gemma2Layer> layers_;
    Tensor* output_norm_;  // [n_embd]
};

}  // namespace

std::unique_ptr<Architecture> make_gemma2(const Model& m) { return std::make_unique<Gemma2>(m); }

}  // namespace pocket
