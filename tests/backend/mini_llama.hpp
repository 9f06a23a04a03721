#pragma once
// A tiny llama-shaped forward pass with random weights, built the way the model code will
// build it: embeddings, per layer rms_norm -> q/k/v -> rope -> KV cache rows (f16) -> fused
// attention over the whole cache with a mask input -> output projection -> SwiGLU FFN; final
// norm and logits for selected rows. Used by the determinism, poison and scheduler tests.
#include "backend/cpu/convert.hpp"
#include "op_test_util.hpp"

#include <limits>

namespace pocket::test {

struct MiniLlama {
    static constexpr int64_t n_embd = 64, n_head = 4, n_head_kv = 2, hd = 16, n_ff = 96, n_vocab = 50;
    static constexpr int n_layer = 3;
    static constexpr int64_t n_ctx = 40;
    static constexpr float eps = 1e-5f;

    struct Layer {
        Tensor attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3, k_cache, v_cache;
    };
    Tensor tok_embd, out_norm, output;
    std::vector<Layer> layers;
    std::unique_ptr<Buffer> weights;  // also holds the KV cache here, for brevity

    std::unique_ptr<Buffer> device_cache;  // KV cache of the layers on `device`, when given

    // Weights in `weight_type` (f32 or f16), a KV cache of `cache_type`; all on `backend`,
    // except the KV cache of layers >= first_device_layer, which lives on `device`.
    MiniLlama(Backend& backend, GgmlType weight_type, GgmlType cache_type, Backend* device = nullptr,
              int first_device_layer = n_layer)
        : layers(n_layer) {
        std::vector<Tensor*> all;
        tok_embd = make_tensor(weight_type, {n_embd, n_vocab, 1, 1}, nullptr, "tok_embd");
        out_norm = make_tensor(GgmlType::F32, {n_embd, 1, 1, 1}, nullptr, "output_norm");
        output = make_tensor(weight_type, {n_embd, n_vocab, 1, 1}, nullptr, "output");
        all = {&tok_embd, &out_norm, &output};
        for (auto& l : layers) {
            l.attn_norm = make_tensor(GgmlType::F32, {n_embd, 1, 1, 1});
            l.ffn_norm = make_tensor(GgmlType::F32, {n_embd, 1, 1, 1});
            l.wq = make_tensor(weight_type, {n_embd, n_head * hd, 1, 1});
            l.wk = make_tensor(weight_type, {n_embd, n_head_kv * hd, 1, 1});
            l.wv = make_tensor(weight_type, {n_embd, n_head_kv * hd, 1, 1});
            l.wo = make_tensor(weight_type, {n_head * hd, n_embd, 1, 1});
            l.w1 = make_tensor(weight_type, {n_embd, n_ff, 1, 1});
            l.w3 = make_tensor(weight_type, {n_embd, n_ff, 1, 1});
            l.w2 = make_tensor(weight_type, {n_ff, n_embd, 1, 1});
            l.k_cache = make_tensor(cache_type, {n_head_kv * hd, n_ctx, 1, 1});
            l.v_cache = make_tensor(cache_type, {n_head_kv * hd, n_ctx, 1, 1});
            for (Tensor* t : {&l.attn_norm, &l.ffn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.w1, &l.w3, &l.w2, &l.k_cache,
                              &l.v_cache})
                all.push_back(t);
        }
        size_t bytes = 0;
        for (Tensor* t : all) bytes += t->nbytes() + Buffer::kAlign;
        weights = backend.alloc_buffer(bytes);
        uint32_t seed = 100;
        for (Tensor* t : all) {
            weights->place(*t);
            auto v = random_floats(static_cast<size_t>(t->nelements()), seed++, -0.5f, 0.5f);
            if (t->ne[1] == 1)
                for (auto& x : v) x += 1.0f;  // norm weights near 1
            for (int64_t r = 0; r < t->nrows(); ++r)
                cpu::row_from_f32(t->type, &v[r * t->ne[0]], static_cast<uint8_t*>(t->data) + r * t->nb[1], t->ne[0]);
        }
        if (device) {
            size_t cache_bytes = 0;
            for (int il = first_device_layer; il < n_layer; ++il)
                cache_bytes += layers[il].k_cache.nbytes() + layers[il].v_cache.nbytes() + 2 * Buffer::kAlign;
            device_cache = device->alloc_buffer(cache_bytes);
            for (int il = first_device_layer; il < n_layer; ++il) {
                device_cache->place(layers[il].k_cache);
                device_cache->place(layers[il].v_cache);
            }
            device_cache->clear(0);
        }
        for (int il = 0; il < (device ? first_device_layer : n_layer); ++il) {
            std::memset(layers[il].k_cache.data, 0, layers[il].k_cache.nbytes());
            std::memset(layers[il].v_cache.data, 0, layers[il].v_cache.nbytes());
        }
    }

    struct Inputs {
        Tensor *ids, *pos, *kv_rows, *mask, *out_rows;
        Tensor* logits;
    };

    // Forward over n_tokens new tokens; attention over all n_ctx cache cells (masked).
    Inputs build(Graph& g, int64_t n_tokens, int64_t n_out) {
        Inputs in;
        in.ids = g.input("ids", GgmlType::I32, {n_tokens, 1, 1, 1});
        in.pos = g.input("pos", GgmlType::I32, {n_tokens, 1, 1, 1});
        in.kv_rows = g.input("kv_rows", GgmlType::I32, {n_tokens, 1, 1, 1});
        in.mask = g.input("kq_mask", GgmlType::F32, {n_ctx, n_tokens, 1, 1});
        in.out_rows = g.input("out_rows", GgmlType::I32, {n_out, 1, 1, 1});
        RopeParams rp;
        rp.n_rot = hd;
        rp.freq_base = 10000.0f;
        Tensor* x = g.get_rows(&tok_embd, in.ids);
        for (int il = 0; il < n_layer; ++il) {
            g.set_layer(il);
            Layer& l = layers[static_cast<size_t>(il)];
            Tensor* h = g.mul(g.rms_norm(x, eps), &l.attn_norm);
            Tensor* q = g.rope(g.reshape(g.mul_mat(&l.wq, h), {hd, n_head, n_tokens, 1}), in.pos, rp);
            Tensor* k = g.rope(g.reshape(g.mul_mat(&l.wk, h), {hd, n_head_kv, n_tokens, 1}), in.pos, rp);
            Tensor* v = g.mul_mat(&l.wv, h);
            g.set_rows(&l.k_cache, g.reshape(k, {hd * n_head_kv, n_tokens, 1, 1}), in.kv_rows);
            g.set_rows(&l.v_cache, v, in.kv_rows);
            const size_t kb = l.k_cache.nb[0] * hd, vb = l.v_cache.nb[0] * hd;
            Tensor* kview = g.view_3d(&l.k_cache, hd, n_head_kv, n_ctx, kb, l.k_cache.nb[1], 0);
            Tensor* vview = g.view_3d(&l.v_cache, hd, n_head_kv, n_ctx, vb, l.v_cache.nb[1], 0);
            Tensor* a = g.flash_attn(q, kview, vview, in.mask, {1.0f / 4.0f, 0.0f, 0, 0});
            x = g.add(x, g.mul_mat(&l.wo, g.reshape(a, {hd * n_head, n_tokens, 1, 1})));
            Tensor* f = g.mul(g.rms_norm(x, eps), &l.ffn_norm);
            x = g.add(x, g.mul_mat(&l.w2, g.swiglu(g.mul_mat(&l.w1, f), g.mul_mat(&l.w3, f))));
        }
        g.set_layer(n_layer);
        x = g.get_rows(x, in.out_rows);
        in.logits = g.mul_mat(&output, g.mul(g.rms_norm(x, eps), &out_norm));
        g.mark_output(in.logits);
        return in;
    }

    // Inputs for tokens at positions [n_past, n_past + n): cache rows = positions, causal mask.
    static void set_inputs(const Inputs& in, const std::vector<int32_t>& tokens, int32_t n_past,
                           const std::vector<int32_t>& out_rows) {
        const auto n = static_cast<int32_t>(tokens.size());
        std::vector<int32_t> pos(static_cast<size_t>(n));
        for (int32_t i = 0; i < n; ++i) pos[static_cast<size_t>(i)] = n_past + i;
        std::vector<float> mask(static_cast<size_t>(n_ctx * n), -std::numeric_limits<float>::infinity());
        for (int32_t t = 0; t < n; ++t)
            for (int32_t c = 0; c <= n_past + t; ++c) mask[static_cast<size_t>(t * n_ctx + c)] = 0.0f;
        tensor_set(*in.ids, tokens.data(), tokens.size() * 4);
        tensor_set(*in.pos, pos.data(), pos.size() * 4);
        tensor_set(*in.kv_rows, pos.data(), pos.size() * 4);
        tensor_set(*in.mask, mask.data(), mask.size() * 4);
        tensor_set(*in.out_rows, out_rows.data(), out_rows.size() * 4);
    }
};

}  // namespace pocket::test
