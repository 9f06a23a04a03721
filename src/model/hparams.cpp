#include "model/hparams.hpp"

#include "pocket/error.hpp"

#include <string>

namespace pocket {
namespace {

RopeMode rope_mode_of(std::string_view arch) {
    // Meta's llama checkpoints rotate adjacent pairs; the HF-born architectures rotate halves.
    if (arch == "qwen2" || arch == "phi3" || arch == "gemma" || arch == "gemma2" || arch == "qwen3" || arch == "phi2")
        return RopeMode::neox;
    return RopeMode::norm;
}

}  // namespace

HParams read_hparams(const GgufFile& f) {
    HParams hp;
    hp.arch = std::string(f.get<std::string_view>("general.architecture"));
    const std::string a = hp.arch + ".";
    auto req = [&](const char* key) { return f.get<uint32_t>(a + key); };
    auto opt = [&](const char* key, uint32_t def) { return f.find_as<uint32_t>(a + key).value_or(def); };
    auto optf = [&](const char* key, float def) { return f.find_as<float>(a + key).value_or(def); };

    hp.n_ctx_train = req("context_length");
    hp.n_embd = req("embedding_length");
    hp.n_layer = req("block_count");
    hp.n_ff = req("feed_forward_length");
    hp.n_head = req("attention.head_count");
    hp.n_head_kv = opt("attention.head_count_kv", hp.n_head);
    if (hp.n_embd == 0 || hp.n_layer == 0 || hp.n_head == 0 || hp.n_head_kv == 0 || hp.n_head % hp.n_head_kv != 0)
        throw Error("{}: implausible hyper-parameters (n_embd {}, n_layer {}, n_head {}, n_head_kv {})", f.path(), hp.n_embd,
                    hp.n_layer, hp.n_head, hp.n_head_kv);
    hp.head_dim_k = opt("attention.key_length", hp.n_embd / hp.n_head);
    hp.head_dim_v = opt("attention.value_length", hp.head_dim_k);
    if (hp.head_dim_k == 0 || hp.head_dim_v == 0)
        throw Error("{}: an attention head of size 0 (n_embd {}, n_head {}): the file's hyper-parameters are damaged", f.path(),
                    hp.n_embd, hp.n_head);
    hp.n_rot = opt("rope.dimension_count", hp.head_dim_k);
    // Rotary embeddings turn pairs of values: the rotated part of a head must be even and fit in it.
    if (hp.n_rot == 0 || hp.n_rot > hp.head_dim_k || hp.n_rot % 2 != 0) {
        if (f.find(a + "rope.dimension_count"))
            throw Error("{}: {}rope.dimension_count is {}, but rotary embeddings need an even size of at most the attention head's {}: "
                        "the file's hyper-parameters are damaged", f.path(), a, hp.n_rot, hp.head_dim_k);
        throw Error("{}: the attention head size {} (embedding_length {} / head_count {}) is odd, and rotary embeddings need an even "
                    "size: the file's hyper-parameters are damaged", f.path(), hp.head_dim_k, hp.n_embd, hp.n_head);
    }
    hp.norm_eps = optf("attention.layer_norm_rms_epsilon", 1e-5f);
    hp.sliding_window = opt("attention.sliding_window", 0);
    hp.n_expert = opt("expert_count", 0);
    hp.n_expert_used = opt("expert_used_count", 0);
    if (hp.n_expert > 0 && (hp.n_expert_used == 0 || hp.n_expert_used > hp.n_expert))
        throw Error("{}: {}expert_used_count {} must be between 1 and {}expert_count {}", f.path(), a, hp.n_expert_used, a, hp.n_expert);

    hp.rope.mode = rope_mode_of(hp.arch);
    hp.rope.n_rot = static_cast<int32_t>(hp.n_rot);
    hp.rope.freq_base = optf("rope.freq_base", 10000.0f);
    hp.rope.n_ctx_orig = static_cast<int32_t>(opt("rope.scaling.original_context_length", hp.n_ctx_train));
    const auto scaling = f.find_as<std::string_view>(a + "rope.scaling.type");
    const float factor = optf("rope.scaling.factor", 0.0f);
    if (scaling && (*scaling == "linear" || *scaling == "yarn") && factor > 0.0f) hp.rope.freq_scale = 1.0f / factor;
    if (scaling && *scaling == "yarn") {
        hp.rope.ext_factor = 1.0f;
        hp.rope.attn_factor = optf("rope.scaling.attn_factor", 1.0f);
        hp.rope.beta_fast = optf("rope.scaling.yarn_beta_fast", 32.0f);
        hp.rope.beta_slow = optf("rope.scaling.yarn_beta_slow", 1.0f);
    }

    // The vocabulary size: the key when present, else the token list.
    if (auto n = f.find_as<uint32_t>(a + "vocab_size")) hp.n_vocab = *n;
    else if (f.find("tokenizer.ggml.tokens")) hp.n_vocab = static_cast<uint32_t>(f.get_strings("tokenizer.ggml.tokens").size());
    else throw Error("{}: missing metadata key '{}vocab_size' (and no tokenizer.ggml.tokens)", f.path(), a);
    return hp;
}

}  // namespace pocket
