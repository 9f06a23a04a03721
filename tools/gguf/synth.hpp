#pragma once
// `gguf synth`: random-weight GGUF models of realistic shapes, so that benchmarks and the
// quantizer run on 1B-class files without downloading anything.
#include <cstdint>
#include <string>
#include <vector>

namespace pocket::tools {

struct SynthShape {
    std::string name;        // preset name
    std::string arch;        // llama or qwen2
    uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
    float rope_base;
    bool tied_output;        // no output.weight
    bool qkv_bias;           // qwen2
    uint32_t head_dim = 0;   // attention.key_length when the heads are not n_embd / n_head wide (0: they are)
    bool qk_norm = false;    // qwen3, qwen3moe, gemma3: attn_q_norm / attn_k_norm
    uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;  // qwen3moe: expert_count, expert_used_count, expert width
    uint32_t sliding_window = 0;  // gemma3: its 5 local layers' window; post norms
};

// Presets: llama-3.2-1b, tinyllama-1.1b, llama-7b, qwen2-0.5b, qwen3-0.6b, qwen3moe-small
// (Qwen3-30B-A3B's layer with 32 of its 128 experts, 8 layers), gemma3-1b, and tiny (for tests).
const std::vector<SynthShape>& synth_presets();

struct SynthOptions {
    std::string preset = "tinyllama-1.1b";
    std::string output;
    std::string vocab;       // a GGUF whose tokenizer.* metadata is copied (sets n_vocab)
    std::string type = "f16";  // f32, f16 or bf16 for the matrices (norms stay f32)
    uint64_t seed = 1;
    int n_layer = 0;         // override the preset's layer count (0: keep)
};

// Writes the model; returns the number of parameters.
uint64_t synth_model(const SynthOptions& options);

}  // namespace pocket::tools
