#include "synth.hpp"

#include "pocket/error.hpp"
#include "pocket/gguf.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/output_file.hpp"

#include <cmath>
#include <cstring>
#include <optional>

namespace pocket::tools {
namespace {

// xorshift64*: fast and reproducible; weights need not be good random numbers.
struct Rng {
    uint64_t s;
    uint64_t next() {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        return s * 0x2545F4914F6CDD1Dull;
    }
    // Approximately N(0, 1): the sum of four uniforms, centred and scaled (Irwin-Hall).
    float normal() {
        float sum = 0;
        for (int i = 0; i < 4; ++i) sum += static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
        return (sum - 2.0f) * 1.7320508f;
    }
};

uint16_t to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000;
    int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffff;
    if (exp <= 0) return static_cast<uint16_t>(sign);  // tiny weights flush to zero: fine here
    if (exp >= 31) return static_cast<uint16_t>(sign | 0x7c00);
    uint32_t h = sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
    if ((mant & 0x1fff) > 0x1000 || ((mant & 0x1fff) == 0x1000 && (h & 1))) ++h;  // round to nearest even
    return static_cast<uint16_t>(h);
}

uint16_t to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    return static_cast<uint16_t>((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

}  // namespace

const std::vector<SynthShape>& synth_presets() {
    static const std::vector<SynthShape> presets = {
        {"llama-3.2-1b", "llama", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, true, false},
        {"tinyllama-1.1b", "llama", 2048, 22, 32, 4, 5632, 32000, 2048, 10000.0f, false, false},
        {"llama-7b", "llama", 4096, 32, 32, 32, 11008, 32000, 4096, 10000.0f, false, false},
        {"qwen2-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768, 1000000.0f, true, true},
        {"tiny", "llama", 256, 2, 8, 4, 768, 512, 2048, 10000.0f, false, false},
        {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 3072, 151936, 40960, 1000000.0f, true, false, 128, true},
        {"qwen3moe-small", "qwen3moe", 2048, 8, 32, 4, 6144, 151936, 40960, 1000000.0f, false, false, 128, true, 32, 8, 768},
        {"gemma3-1b", "gemma3", 1152, 26, 4, 1, 6912, 262144, 32768, 1000000.0f, true, false, 256, true, 0, 0, 0, 512},
    };
    return presets;
}

uint64_t synth_model(const SynthOptions& o) {
    check_output_file(o.output, {o.vocab});  // never overwrite the vocabulary it copies
    const SynthShape* shape = nullptr;
    for (const auto& p : synth_presets())
        if (p.name == o.preset) shape = &p;
    if (!shape)
        throw Error("unknown preset '{}' (llama-3.2-1b, tinyllama-1.1b, llama-7b, qwen2-0.5b, qwen3-0.6b, qwen3moe-small, gemma3-1b, tiny)",
                    o.preset);
    SynthShape s = *shape;
    if (o.n_layer > 0) s.n_layer = static_cast<uint32_t>(o.n_layer);
    const auto type = ggml_type_from_name(o.type);
    if (!type || (*type != GgmlType::F32 && *type != GgmlType::F16 && *type != GgmlType::BF16))
        throw Error("synth writes f32, f16 or bf16, not '{}' (quantize the result with `quantize`)", o.type);

    std::optional<GgufFile> vocab;
    if (!o.vocab.empty()) {
        vocab.emplace(GgufFile::open(o.vocab));
        s.n_vocab = static_cast<uint32_t>(vocab->get_strings("tokenizer.ggml.tokens").size());
    }

    GgufWriter w(o.output);
    const std::string a = s.arch + ".";
    w.set_string("general.architecture", s.arch);
    w.set_string("general.name", "pocket-synth-" + s.name);
    w.set<uint32_t>("general.file_type", *type == GgmlType::F32 ? 0 : *type == GgmlType::F16 ? 1 : 32);
    w.set<uint32_t>(a + "context_length", s.n_ctx);
    w.set<uint32_t>(a + "embedding_length", s.n_embd);
    w.set<uint32_t>(a + "block_count", s.n_layer);
    w.set<uint32_t>(a + "feed_forward_length", s.n_ff);
    w.set<uint32_t>(a + "attention.head_count", s.n_head);
    w.set<uint32_t>(a + "attention.head_count_kv", s.n_head_kv);
    w.set<float>(a + "rope.freq_base", s.rope_base);
    w.set<float>(a + "attention.layer_norm_rms_epsilon", 1e-5f);
    w.set<uint32_t>(a + "vocab_size", s.n_vocab);
    const uint32_t head_dim = s.head_dim ? s.head_dim : s.n_embd / s.n_head;
    w.set<uint32_t>(a + "rope.dimension_count", head_dim);
    if (s.head_dim) {
        w.set<uint32_t>(a + "attention.key_length", head_dim);
        w.set<uint32_t>(a + "attention.value_length", head_dim);
    }
    if (s.n_expert) {
        w.set<uint32_t>(a + "expert_count", s.n_expert);
        w.set<uint32_t>(a + "expert_used_count", s.n_expert_used);
        w.set<uint32_t>(a + "expert_feed_forward_length", s.n_ff_exp);
    }
    if (s.sliding_window) {
        w.set<uint32_t>(a + "attention.sliding_window", s.sliding_window);
        w.set<float>(a + "rope.freq_base_swa", 10000.0f);
    }
    if (vocab) {
        for (const auto& kv : vocab->metadata())
            if (kv.key.starts_with("tokenizer.")) w.set_value(kv.key, kv.value);
    } else {
        // A byte-level stand-in vocabulary: enough for bench and quantize, not for reading text.
        std::vector<std::string> tokens;
        std::vector<float> scores;
        std::vector<int32_t> types;
        for (uint32_t i = 0; i < s.n_vocab; ++i) {
            tokens.push_back(i < 3 ? std::string(i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>") : "<t" + std::to_string(i) + ">");
            scores.push_back(-static_cast<float>(i));
            types.push_back(i == 0 ? 2 : i < 3 ? 3 : 1);
        }
        w.set_string("tokenizer.ggml.model", "llama");
        w.set_strings("tokenizer.ggml.tokens", tokens);
        w.set_array<float>("tokenizer.ggml.scores", scores);
        w.set_array<int32_t>("tokenizer.ggml.token_type", types);
        w.set<uint32_t>("tokenizer.ggml.bos_token_id", 1);
        w.set<uint32_t>("tokenizer.ggml.eos_token_id", 2);
    }

    struct Pending { GgmlType type; int64_t n; bool ones; };
    std::vector<Pending> order;
    uint64_t n_params = 0;
    // matrix: random N(0, 0.02) in the chosen type; else a norm weight near 1 in f32. f32_matrix:
    // a random matrix kept in f32 (the MoE router).
    auto add = [&](const std::string& name, std::initializer_list<int64_t> ne, bool matrix, bool f32_matrix = false) {
        const GgmlType t = matrix && !f32_matrix ? *type : GgmlType::F32;
        w.add_tensor(name, t, std::span<const int64_t>(ne.begin(), ne.size()));
        int64_t n = 1;
        for (auto x : ne) n *= x;
        order.push_back({t, n, !matrix});
        n_params += static_cast<uint64_t>(n);
    };
    const int64_t d = s.n_embd, hd = head_dim, q = hd * s.n_head, kv = hd * s.n_head_kv;
    add("token_embd.weight", {d, s.n_vocab}, true);
    for (uint32_t l = 0; l < s.n_layer; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        add(b + "attn_norm.weight", {d}, false);
        add(b + "attn_q.weight", {d, q}, true);
        add(b + "attn_k.weight", {d, kv}, true);
        add(b + "attn_v.weight", {d, kv}, true);
        if (s.qkv_bias) {
            add(b + "attn_q.bias", {d}, false);
            add(b + "attn_k.bias", {kv}, false);
            add(b + "attn_v.bias", {kv}, false);
        }
        if (s.qk_norm) {
            add(b + "attn_q_norm.weight", {hd}, false);
            add(b + "attn_k_norm.weight", {hd}, false);
        }
        add(b + "attn_output.weight", {q, d}, true);
        if (s.sliding_window) add(b + "post_attention_norm.weight", {d}, false);
        add(b + "ffn_norm.weight", {d}, false);
        if (s.n_expert) {
            const int64_t e = s.n_expert, f = s.n_ff_exp;
            add(b + "ffn_gate_inp.weight", {d, e}, true, true);  // the router stays f32, as llama-quantize leaves it
            add(b + "ffn_gate_exps.weight", {d, f, e}, true);
            add(b + "ffn_up_exps.weight", {d, f, e}, true);
            add(b + "ffn_down_exps.weight", {f, d, e}, true);
        } else {
            add(b + "ffn_gate.weight", {d, s.n_ff}, true);
            add(b + "ffn_up.weight", {d, s.n_ff}, true);
            add(b + "ffn_down.weight", {s.n_ff, d}, true);
        }
        if (s.sliding_window) add(b + "post_ffw_norm.weight", {d}, false);
    }
    add("output_norm.weight", {d}, false);
    if (!s.tied_output) add("output.weight", {d, s.n_vocab}, true);

    w.begin();
    Rng rng{o.seed * 0x9E3779B97F4A7C15ull + 1};
    std::vector<uint8_t> buf;
    constexpr int64_t kChunk = 1 << 20;
    for (const auto& p : order) {
        for (int64_t done = 0; done < p.n; done += kChunk) {
            const int64_t n = std::min(kChunk, p.n - done);
            const size_t es = p.type == GgmlType::F32 ? 4 : 2;
            buf.resize(static_cast<size_t>(n) * es);
            for (int64_t i = 0; i < n; ++i) {
                // Norm weights near 1, matrices N(0, 0.02) like an initialised transformer.
                const float v = p.ones ? 1.0f + 0.05f * rng.normal() : 0.02f * rng.normal();
                if (p.type == GgmlType::F32) std::memcpy(buf.data() + i * 4, &v, 4);
                else {
                    const uint16_t h = p.type == GgmlType::F16 ? to_f16(v) : to_bf16(v);
                    std::memcpy(buf.data() + i * 2, &h, 2);
                }
            }
            w.write(buf.data(), buf.size());
        }
    }
    w.finish();
    return n_params;
}

}  // namespace pocket::tools
