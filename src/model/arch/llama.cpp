// llama: Llama 2 and 3, Mistral, TinyLlama, Mixtral. Pre-norm (RMSNorm), rotary attention over
// adjacent pairs with grouped-query heads, SwiGLU feed-forward; tied output when the file
// has no output.weight; llama3's per-dimension rope frequency factors when it has rope_freqs.
// With expert_count (Mixtral) every feed-forward is a mixture of experts, each expert
// feed_forward_length wide (llama.cpp reads no expert_feed_forward_length for llama).
#include "model/architectures.hpp"
#include "model/blocks.hpp"

#include <vector>

namespace pocket {
namespace {

struct LlamaLayer {
    Tensor* attn_norm;  // [n_embd]
    Tensor* wq;         // [n_embd, n_head * head_dim]
    Tensor* wk;         // [n_embd, n_head_kv * head_dim]
    Tensor* wv;         // [n_embd, n_head_kv * head_dim]
    Tensor* wo;         // [n_head * head_dim, n_embd]
    Tensor* ffn_norm;   // [n_embd]
    Tensor* w_gate;     // [n_embd, n_ff], null with experts
    Tensor* w_up;       // [n_embd, n_ff], null with experts
    Tensor* w_down;     // [n_ff, n_embd], null with experts
    Tensor* rope_freqs; // [n_rot / 2] or null: the model's one rope_freqs, on this layer's device
    MoeWeights moe;     // with experts: router [n_embd, n_expert], experts [n_embd, n_ff, n_expert] (down: [n_ff, n_embd, n_expert])
};

class Llama final : public Architecture {
public:
    explicit Llama(const Model& m) : hp_(m.hparams()) {
        const HParams& hp = hp_;
        const int64_t d = hp.n_embd, q = hp.n_head * hp.head_dim_k, kv = hp.n_embd_k_gqa(), vv = hp.n_embd_v_gqa();
        tok_embd_ = m.weight("token_embd.weight", {d, hp.n_vocab});
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const std::string b = "blk." + std::to_string(l) + ".";
            const bool moe = hp.n_expert > 0;
            auto dense = [&](const char* name, std::initializer_list<int64_t> shape) { return moe ? nullptr : m.weight(b + name, shape); };
            layers_.push_back({m.weight(b + "attn_norm.weight", {d}), m.weight(b + "attn_q.weight", {d, q}),
                               m.weight(b + "attn_k.weight", {d, kv}), m.weight(b + "attn_v.weight", {d, vv}),
                               m.weight(b + "attn_output.weight", {hp.n_head * hp.head_dim_v, d}),
                               m.weight(b + "ffn_norm.weight", {d}), dense("ffn_gate.weight", {d, hp.n_ff}),
                               dense("ffn_up.weight", {d, hp.n_ff}), dense("ffn_down.weight", {hp.n_ff, d}),
                               m.optional_weight("rope_freqs.weight", {hp.n_rot / 2}, static_cast<int>(l)),
                               moe ? moe_weights(m, l, d, hp.n_ff, hp.n_expert) : MoeWeights{}});
        }
        output_norm_ = m.weight("output_norm.weight", {d});
        output_ = m.optional_weight("output.weight", {d, hp.n_vocab});
        if (!output_) output_ = m.weight("token_embd.weight", {d, hp.n_vocab}, static_cast<int>(hp.n_layer));  // tied: the output layer's copy
    }

    Tensor* build(Graph& g, const ForwardInputs& in) const override {
        const HParams& hp = hp_;
        Tensor* x = g.get_rows(tok_embd_, in.ids);  // [n_embd, n_tokens]
        for (uint32_t l = 0; l < hp.n_layer; ++l) {
            const LlamaLayer& w = layers_[l];
            g.set_layer(static_cast<int>(l));
            // attention
            Tensor* h = g.mul(g.rms_norm(x, hp.norm_eps), w.attn_norm);
            Tensor* q = g.rope(split_heads(g, g.mul_mat(w.wq, h), hp.head_dim_k), in.pos, hp.rope, w.rope_freqs);
            Tensor* k = g.rope(split_heads(g, g.mul_mat(w.wk, h), hp.head_dim_k), in.pos, hp.rope, w.rope_freqs);
            Tensor* v = g.mul_mat(w.wv, h);
            x = g.add(x, g.mul_mat(w.wo, attention(g, in, l, q, k, v)));
            // feed-forward
            h = g.mul(g.rms_norm(x, hp.norm_eps), w.ffn_norm);
            if (hp.n_expert > 0) x = g.add(x, moe_ffn(g, h, w.moe, hp.n_expert_used));
            else x = g.add(x, g.mul_mat(w.w_down, g.swiglu(g.mul_mat(w.w_gate, h), g.mul_mat(w.w_up, h))));
        }
        g.set_layer(static_cast<int>(hp.n_layer));
        x = output_rows(g, in, x);
        return g.mul_mat(output_, g.mul(g.rms_norm(x, hp.norm_eps), output_norm_));  // [n_vocab, n_out]
    }

    Tensor* rope_freq_factors(uint32_t layer) const override { return layers_[layer].rope_freqs; }

private:
    HParams hp_;
    Tensor* tok_embd_;     // [n_embd, n_vocab]
    std::vector<LlamaLayer> layers_;
    Tensor* output_norm_;  // [n_embd]
    Tensor* output_;       // [n_embd, n_vocab]
};

}  // namespace

std::unique_ptr<Architecture> make_llama(const Model& m) { return std::make_unique<Llama>(m); }

}  // namespace pocket
