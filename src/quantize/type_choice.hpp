#pragma once
// Internal: llama.cpp's per-tensor type choice (llama_tensor_get_type and its helpers in
// src/llama-quant.cpp), restated. Which matrices are quantized at all, which get more bits
// in the _S/_M/_L mixes, and the fallback when a row does not fit the chosen block size.
#include "pocket/gguf.hpp"
#include "pocket/quantize.hpp"

#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pocket::quantize {

// The hyper-parameters the mixes look at.
struct ModelShape {
    std::string arch;          // general.architecture
    int n_layer = 0;           // <arch>.block_count
    uint32_t n_head = 0;       // <arch>.attention.head_count (layer 0 when per layer)
    uint32_t n_head_kv = 0;    // <arch>.attention.head_count_kv (default n_head)
    uint32_t n_expert = 0;     // <arch>.expert_count
    bool is_70b = false;       // llama with 80 layers and GQA: attn_v gets Q5_K there
    uint32_t n_gqa() const { return n_head_kv == 0 ? 0 : n_head / n_head_kv; }
};
ModelShape model_shape(const GgufFile& file);

// Broad roles, from the tensor's name (the same for every architecture).
enum class TensorRole { token_embd, attn_q, attn_k, attn_v, attn_qkv, attn_kv_b, attn_output, ffn_up, ffn_gate, ffn_down, output, other };
TensorRole tensor_role(std::string_view name);

struct TensorShape {
    std::string_view name;
    std::array<int64_t, 4> ne;
    uint32_t n_dims;
    GgmlType type;
};

// Decides the output type of each tensor. Stateful, like llama.cpp's: attn_v and ffn_*
// tensors are counted as they come, so tensors must be presented in output order.
class TypeChooser {
public:
    // `has_output`: the file has output.weight (else token_embd doubles as the output and is
    // chosen like it).
    TypeChooser(ModelShape shape, const QuantFileType& type, const QuantizeOptions& options, bool has_imatrix,
                int n_attn_v, bool has_output);

    // Whether llama.cpp quantizes this tensor at all (2-D and 3-D weights, minus norms,
    // routers, positional embeddings and a list of small tensors).
    bool allows_quantization(const TensorShape& t) const;
    // The output type; sets fell_back when the row length forced a 32-block type.
    // Throws when no type fits the row (llama.cpp defines no fallback for 32-block types).
    GgmlType choose(const TensorShape& t, bool& fell_back);
    // Q2_K_S's Q2_K matrices are garbage without an imatrix: llama.cpp refuses them.
    bool requires_imatrix(std::string_view name, GgmlType to) const;

private:
    GgmlType mix(const TensorShape& t, TensorRole role, GgmlType type);
    GgmlType very_low_bit_mix(TensorRole role, GgmlType type);
    GgmlType fallback(const TensorShape& t, GgmlType type, bool& fell_back) const;
    int layer_of(const TensorShape& t, int counter) const;

    ModelShape shape_;
    const QuantFileType& ftype_;
    QuantizeOptions options_;
    bool has_imatrix_;
    bool tied_;               // no output.weight: token_embd is treated as the output
    int n_attn_v_;
    int i_attn_v_ = 0, i_ffn_down_ = 0, i_ffn_gate_ = 0, i_ffn_up_ = 0;
    std::vector<std::pair<std::regex, GgmlType>> user_types_;  // --tensor-type, compiled once
};

}  // namespace pocket::quantize
