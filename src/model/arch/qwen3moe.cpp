// qwen3moe: qwen3's attention (per-head RMSNorm of Q and K before NEOX rope, head size from
// key_length) with a mixture-of-experts feed-forward in every layer: a router picks
// expert_used_count of expert_count SwiGLU experts per token, each expert_feed_forward_length
// wide (the dense feed_forward_length is stored but unused; without the key llama.cpp takes
// feed_forward_length / expert_used_count). Tied output when the file has no output.weight.
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include "pocket/error.hpp"

#include <vector>

namespace pocket {
namespace {

struct Qwen3MoeLayer {
    Tensor* attn_norm;  // [n_embd]
    Tensor* wq;         // [n_embd, n_head * head_dim]
    Tensor* wk;         // [n_embd, n_head_kv * head_dim]
    Tensor* wv;         // [n_embd, n_head_kv * head_dim]
    Tensor* q_norm;     // [head_dim]
    Tensor* k_norm;     // [head_dim]
    Tensor* wo;         // [n_head * head_dim, n_embd]
    Tensor* ffn_norm;   // [n_embd]
    MoeWeights moe;     // router [n_embd, n_expert], experts [n_embd, n_ff_exp, n_expert] (down: [n_ff_exp, n_embd, n_expert])
};

class Qwen3Moe final : public Architecture {
public:
    explicit Qwen3Moe(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        if (hp.n_expert == 0) throw Error("{}: qwen3moe.expert_count is missing or 0", m.file().path());
        hp_.rope.mode = RopeMode::neox;
        const uint32_t n_ff_exp = m.file().find_as<uint32_t>("qwen3moe.expert_feed_forward_length").value_or(hp.n_ff / hp.n_expert_used);
        const int64_t d = hp.n_embd, hd = hp.head_dim_k, q = hp.n_head * hd, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_q.weight", {d, q}),
                               m.weight(b + "attn_k.weight", {d, kv}), m.weight(b + "attn_v.weight", {d, vv}),
                               m.weight(b + "attn_q_norm.weight", {hd}), m.weight(b + "attn_k_norm.weight", {hd}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}), m.weight(b + "ffn_norm.weight", {d}),
                               moe_weights(m, l, d, n_ff_exp, hp.n_expert)});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
        output_ = m.optional_weight("output.weight", {d, hp.n_vocab});
        if (!output_) output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // tied: the output layer's copy
    }

    RopeParams layer_rope(uint32_t, const RopeParams&) const override { return hp_.rope; }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        Tensor* x = g.get_rows(tok_embd_, in.ids);  // [n_embd, n_tokens]
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const Qwen3MoeLayer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            Tensor* q = g.mul(g.rms_norm(split_heads(g, g.mul_mat(w.wq, h), hp.head_dim_k), hp.norm_eps), w.q_norm);
            Tensor* k = g.mul(g.rms_norm(split_heads(g, g.mul_mat(w.wk, h), hp.head_dim_k), hp.norm_eps), w.k_norm);
            Tensor* v = g.mul_mat(w.wv, h);
            x = g.add(x, g.mul_mat(w.wo, attention(g, in, l, g.rope(q, in.pos, hp.rope), g.rope(k, in.pos, hp.rope), v)));
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            x = g.add(x, moe_ffn(g, h, w.moe, hp.n_expert_used));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        return g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_));
    }

private:
    HParams hp_;
    Tensor* tok_embd_;     // [n_embd, n_vocab]
    std::vector<Qwen3MoeLayer> layers_;
    Tensor* output_norm_;  // [n_embd]
    Tensor* output_;       // [n_embd, n_vocab]
};

}  // namespace

std::unique_ptr<Architecture> make_qwen3moe(const Model& m) { return std::make_unique<Qwen3Moe>(m); }

}  // namespace pocket
