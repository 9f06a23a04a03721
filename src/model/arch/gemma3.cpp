// gemma3: gemma2's layout (post-attention and post-feed-forward norms, embeddings scaled by
// sqrt(n_embd), Q scaled by 1/sqrt(head_dim) before Q.K, tied output) with qwen3's per-head
// RMSNorm of Q and K in place of attention soft-capping. Five sliding-window layers to one
// global: the local layers see a short window, so they rope with a base of their own
// (rope.freq_base_swa, 10000) and no context scaling; only the global layers carry the long
// context, with rope.freq_base and the linear rope scaling. Final soft-capping only when the
// file stores a cap.
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include <cmath>
#include <vector>

namespace pocket {
namespace {

struct Gemma3Layer {
    Tensor* attn_norm;       // [n_embd]
    Tensor* wq;              // [n_embd, n_head * head_dim]
    Tensor* wk;              // [n_embd, n_head_kv * head_dim]
    Tensor* wv;              // [n_embd, n_head_kv * head_dim]
    Tensor* q_norm;          // [head_dim]
    Tensor* k_norm;          // [head_dim]
    Tensor* wo;              // [n_head * head_dim, n_embd]
    Tensor* post_attn_norm;  // [n_embd]
    Tensor* ffn_norm;        // [n_embd]
    Tensor* w_gate;          // [n_embd, n_ff]
    Tensor* w_up;            // [n_embd, n_ff]
    Tensor* w_down;          // [n_ff, n_embd]
    Tensor* post_ffw_norm;   // [n_embd]
};

class Gemma3 final : public Architecture {
public:
    explicit Gemma3(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        const GgufFile& f = m.file();
        hp_.rope.mode = RopeMode::neox;
        local_rope_ = hp_.rope;
        local_rope_.freq_base = f.find_as<float>("gemma3.rope.freq_base_swa").value_or(10000.0f);
        local_rope_.freq_scale = 1.0f;
        final_softcap_ = f.find_as<float>("gemma3.final_logit_softcapping").value_or(0.0f);
        // The 27B model (62 layers) scales by 1/sqrt(n_embd / n_head): its query_pre_attn_scalar.
        q_scale_ = 1.0f / std::sqrt(static_cast<float>(hp.n_layer == 62 ? hp.n_embd / hp.n_head : hp.head_dim_k));
        const int64_t d = hp.n_embd, hd = hp.head_dim_k, q = hp.n_head * hd, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // always tied
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_q.weight", {d, q}),
                               m.weight(b + "attn_k.weight", {d, kv}), m.weight(b + "attn_v.weight", {d, vv}),
                               m.weight(b + "attn_q_norm.weight", {hd}), m.weight(b + "attn_k_norm.weight", {hd}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}),
                               m.weight(b + "post_attention_norm.weight", {d}), m.weight(b + "ffn_norm.weight", {d}),
                               m.weight(b + "ffn_gate.weight", {d, hp.n_ff}), m.weight(b + "ffn_up.weight", {d, hp.n_ff}),
                               m.weight(b + "ffn_down.weight", {hp.n_ff, d}), m.weight(b + "post_ffw_norm.weight", {d})});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
    }

    // Layers 0-4 of every 6 use the window; without a window every layer is global.
    bool is_local(uint32_t layer) const { return hp_.sliding_window > 0 && layer % 6 < 5; }

    RopeParams layer_rope(uint32_t layer, const RopeParams&) const override { return is_local(layer) ? local_rope_ : hp_.rope; }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        Tensor* x = g.scale(g.get_rows(tok_embd_, in.ids), std::sqrt(static_cast<float>(hp.n_embd)));
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const Gemma3Layer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            const RopeParams rope = layer_rope(l, hp.rope);
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            Tensor* q = g.mul(g.rms_norm(split_heads(g, g.mul_mat(w.wq, h), hp.head_dim_k), hp.norm_eps), w.q_norm);
            Tensor* k = g.mul(g.rms_norm(split_heads(g, g.mul_mat(w.wk, h), hp.head_dim_k), hp.norm_eps), w.k_norm);
            Tensor* v = g.mul_mat(w.wv, h);
            q = g.scale(g.rope(q, in.pos, rope), q_scale_);
            const AttnParams p{.scale = 1.0f, .window = is_local(l) ? static_cast<int32_t>(hp.sliding_window) : 0};
            Tensor* a = g.mul_mat(w.wo, attention(g, in, l, q, g.rope(k, in.pos, rope), v, p));
            x = g.add(x, g.mul(g.rms_norm(a, hp.norm_eps), w.post_attn_norm));
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            Tensor* f = g.mul_mat(w.w_down, g.geglu(g.mul_mat(w.w_gate, h), g.mul_mat(w.w_up, h)));
            x = g.add(x, g.mul(g.rms_norm(f, hp.norm_eps), w.post_ffw_norm));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        Tensor* logits = g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_));
        if (final_softcap_ > 0.0f) logits = g.scale(g.tanh(g.scale(logits, 1.0f / final_softcap_)), final_softcap_);
        return logits;
    }

private:
    HParams hp_;
    RopeParams local_rope_;  // the sliding-window layers' rope
    float final_softcap_, q_scale_;
    Tensor* tok_embd_;       // [n_embd, n_vocab]
    Tensor* output_;         // [n_embd, n_vocab]: token_embd.weight again, on the output's device
    std::vector<Gemma3Layer> layers_;
    Tensor* output_norm_;    // [n_embd]
};

}  // namespace

std::unique_ptr<Architecture> make_gemma3(const Model& m) { return std::make_unique<Gemma3>(m); }

}  // namespace pocket
