// Per-tensor type choice, restating llama.cpp's rules (src/llama-quant.cpp at the reference
// build): the reference files in shared/reference/f_quantize hold what llama-quantize chose,
// and tests/quantize compares every tensor with them.
#include "type_choice.hpp"

#include "pocket/error.hpp"

#include <algorithm>
#include <charconv>

namespace pocket::quantize {
namespace {

// llama_ftype ids the rules name.
enum FileTypeId : uint32_t {
    kQ4_0 = 2, kQ5_0 = 8, kQ2_K = 10, kQ3_K_S = 11, kQ3_K_M = 12, kQ3_K_L = 13, kQ4_K_S = 14, kQ4_K_M = 15,
    kQ5_K_M = 17, kIQ2_XXS = 19, kIQ2_XS = 20, kQ2_K_S = 21, kIQ3_XS = 22, kIQ3_XXS = 23, kIQ1_S = 24, kIQ4_NL = 25,
    kIQ3_S = 26, kIQ3_M = 27, kIQ2_S = 28, kIQ2_M = 29, kIQ4_XS = 30, kIQ1_M = 31, kTQ1_0 = 36, kTQ2_0 = 37,
    kMXFP4_MOE = 38,
};

// The 1- and 2-bit mixes, which have rules of their own for every sensitive tensor.
bool is_very_low_bit(uint32_t ft) {
    return ft == kIQ2_XXS || ft == kIQ2_XS || ft == kIQ1_S || ft == kIQ2_S || ft == kIQ2_M || ft == kIQ1_M;
}
// The mixes whose second type for sensitive tensors is IQ3_S (the rest of the very low ones use Q2_K).
bool upgrades_to_iq3_s(uint32_t ft) { return ft == kIQ2_S || ft == kIQ2_M; }

// Layers whose ffn_down / attn_v get more bits in the _M mixes: the first and last eighth,
// and every third layer in between.
bool use_more_bits(int i_layer, int n_layer) {
    return i_layer < n_layer / 8 || i_layer >= 7 * n_layer / 8 || (i_layer - n_layer / 8) % 3 == 2;
}

// ggml_n_dims: trailing dimensions of 1 do not count.
uint32_t effective_dims(const std::array<int64_t, 4>& ne) {
    for (uint32_t i = 3; i >= 1; --i)
        if (ne[i] != 1) return i + 1;
    return 1;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// Weights llama.cpp never quantizes although they are 2-D: routers, small per-layer tables,
// convolution kernels, positional tables, multimodal projector parts.
constexpr std::string_view kNeverQuantized[] = {
    "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel", "per_layer_model_proj",
    "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight", "indexer.q_proj.weight",
    "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
    "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
    "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
    "time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
    ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger",
    "a.rvq.codebook", "mm.a.code_embd",
};

bool is_token_embd(std::string_view name) { return name == "token_embd.weight" || name == "per_layer_token_embd.weight"; }

std::optional<uint32_t> first_uint(const GgufFile& f, const std::string& key) {
    const GgufValue* v = f.find(key);
    if (!v) return std::nullopt;
    if (v->type != GgufType::ARRAY) return gguf_value_as<uint32_t>(*v);
    // Per-layer values (some architectures): the rules look at layer 0, as llama.cpp does.
    if (v->count() == 0) return std::nullopt;
    if (auto a = v->array<uint32_t>(); !a.empty()) return a[0];
    if (auto a = v->array<int32_t>(); !a.empty()) return static_cast<uint32_t>(std::max(a[0], 0));
    return std::nullopt;
}

int parse_layer(std::string_view name) {
    if (!name.starts_with("blk.")) return -1;
    int layer = -1;
    const auto [p, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), layer);
    return ec == std::errc() && p < name.data() + name.size() && *p == '.' ? layer : -1;
}

}  // namespace

ModelShape model_shape(const GgufFile& file) {
    ModelShape s;
    if (const GgufValue* a = file.find("general.architecture"); a && a->type == GgufType::STRING) s.arch = std::string(a->as_string());
    if (auto n = first_uint(file, s.arch + ".block_count")) {
        s.n_layer = static_cast<int>(*n);
    } else {  // not a model llama.cpp would load; count the blocks so the rules still work
        for (const auto& t : file.tensors()) s.n_layer = std::max(s.n_layer, parse_layer(t.name) + 1);
    }
    s.n_head = first_uint(file, s.arch + ".attention.head_count").value_or(0);
    s.n_head_kv = first_uint(file, s.arch + ".attention.head_count_kv").value_or(s.n_head);
    s.n_expert = first_uint(file, s.arch + ".expert_count").value_or(0);
    // llama.cpp's model-size guess, which only matters for 70B models.
    s.is_70b = (s.arch == "llama" && s.n_layer == 80 && s.n_head != s.n_head_kv) ||
               ((s.arch == "qwen2" || s.arch == "olmo" || s.arch == "deci") && s.n_layer == 80) ||
               (s.arch == "jais2" && s.n_layer == 68);
    return s;
}

TensorRole tensor_role(std::string_view name) {
    if (name == "output.weight") return TensorRole::output;
    if (is_token_embd(name)) return TensorRole::token_embd;
    if (contains(name, "attn_qkv.weight")) return TensorRole::attn_qkv;
    if (contains(name, "attn_kv_b.weight")) return TensorRole::attn_kv_b;
    if (contains(name, "attn_v.weight")) return TensorRole::attn_v;
    if (contains(name, "attn_k.weight")) return TensorRole::attn_k;
    if (contains(name, "attn_q.weight")) return TensorRole::attn_q;
    if (contains(name, "attn_output.weight")) return TensorRole::attn_output;
    if (contains(name, "ffn_up")) return TensorRole::ffn_up;
    if (contains(name, "ffn_gate")) return TensorRole::ffn_gate;
    if (contains(name, "ffn_down")) return TensorRole::ffn_down;
    return TensorRole::other;
}

TypeChooser::TypeChooser(ModelShape shape, const QuantFileType& type, const QuantizeOptions& options, bool has_imatrix,
                         int n_attn_v, bool has_output)
    : shape_(std::move(shape)), ftype_(type), options_(options), has_imatrix_(has_imatrix), tied_(!has_output),
      n_attn_v_(n_attn_v) {
    for (const auto& [pattern, to] : options.tensor_types) {
        try {
            user_types_.emplace_back(std::regex(pattern), to);
        } catch (const std::regex_error& e) {
            throw Error("--tensor-type {}: not a valid regular expression ({})", pattern, e.what());
        }
    }
}

bool TypeChooser::allows_quantization(const TensorShape& t) const {
    if (ftype_.copy) return false;
    if (effective_dims(t.ne) < 2) return false;  // 1-D tensors (norms, biases) stay as they are
    const std::string_view name = t.name;
    if (!name.ends_with("weight")) return false;
    if (contains(name, "_norm.weight")) return false;
    if (options_.leave_output_tensor && name == "output.weight") return false;
    if (name == "position_embd.weight" || name == "token_types.weight") return false;
    return std::none_of(std::begin(kNeverQuantized), std::end(kNeverQuantized),
                        [&](std::string_view part) { return contains(name, part); });
}

int TypeChooser::layer_of(const TensorShape& t, int counter) const {
    if (shape_.n_expert <= 1) return counter;
    // Expert tensors need not come in layer order: read the layer from the name.
    const int layer = parse_layer(t.name);
    if (layer < 0 || layer >= shape_.n_layer) throw Error("tensor '{}': cannot tell its layer (of {})", t.name, shape_.n_layer);
    return layer;
}

GgmlType TypeChooser::mix(const TensorShape& t, TensorRole role, GgmlType type) {
    const uint32_t ft = ftype_.id;
    const bool falcon = shape_.arch == "falcon";
    const uint32_t gqa = shape_.n_gqa();
    const int n_layer = shape_.n_layer;

    // The output matrix (and a tied token_embd, which serves as it) gets 6 bits (5 in the
    // very low mixes, 8 in MXFP4_MOE).
    if (role == TensorRole::output || (tied_ && role == TensorRole::token_embd)) {
        if (options_.output_tensor_type) return *options_.output_tensor_type;
        if (ft == kMXFP4_MOE) return GgmlType::Q8_0;
        if (falcon || t.ne[0] % ggml_type_info(type).block_size != 0) return GgmlType::Q8_0;
        if (is_very_low_bit(ft) || ft == kIQ3_XXS) return GgmlType::Q5_K;
        return type == GgmlType::Q8_0 ? type : GgmlType::Q6_K;
    }
    // MXFP4_MOE: the experts (3-D) in MXFP4, everything else in Q8_0.
    if (ft == kMXFP4_MOE) {
        const bool expert_matrix = shape_.arch != "bailingmoe3" || role == TensorRole::ffn_up ||
                                   role == TensorRole::ffn_gate || role == TensorRole::ffn_down;
        return t.ne[2] > 1 && expert_matrix ? GgmlType::MXFP4 : GgmlType::Q8_0;
    }
    if (role == TensorRole::token_embd) {
        if (ft == kIQ2_XXS || ft == kIQ2_XS || ft == kIQ1_S || ft == kIQ1_M) return GgmlType::Q2_K;
        if (upgrades_to_iq3_s(ft) || ft == kIQ3_XXS) return GgmlType::IQ3_S;
        if (ft == kTQ1_0 || ft == kTQ2_0) return GgmlType::Q4_K;
        return type;
    }
    if (is_very_low_bit(ft)) return very_low_bit_mix(role, type);

    // attn_v (and the fused qkv / kv_b that contain V): small and sensitive.
    if (role == TensorRole::attn_v || role == TensorRole::attn_qkv || role == TensorRole::attn_kv_b) {
        const int i = i_attn_v_++;
        if (ft == kQ2_K) type = gqa >= 4 ? GgmlType::Q4_K : GgmlType::Q3_K;
        else if (ft == kQ2_K_S && gqa >= 4) type = GgmlType::Q4_K;
        else if (ft == kIQ3_XXS) type = gqa >= 4 ? GgmlType::Q4_K : !has_imatrix_ ? GgmlType::IQ3_S : GgmlType::IQ3_XXS;
        else if ((ft == kIQ3_XS || ft == kIQ3_S) && gqa >= 4) type = GgmlType::Q4_K;
        else if (ft == kIQ3_M) type = GgmlType::Q4_K;
        else if (ft == kQ3_K_M) type = i < 2 ? GgmlType::Q5_K : GgmlType::Q4_K;
        else if (ft == kQ3_K_L) type = GgmlType::Q5_K;
        else if ((ft == kIQ4_NL || ft == kIQ4_XS) && gqa >= 4) type = GgmlType::Q5_K;
        else if ((ft == kQ4_K_M || ft == kQ5_K_M) && use_more_bits(i, n_attn_v_)) type = GgmlType::Q6_K;
        else if (ft == kQ4_K_S && i < 4) type = GgmlType::Q5_K;
        // 70B: 8 query heads share each V head, so V is 8x smaller than Q: more bits are cheap.
        if (shape_.is_70b && (type == GgmlType::Q3_K || type == GgmlType::Q4_K)) type = GgmlType::Q5_K;
        if (shape_.n_expert == 8) type = GgmlType::Q8_0;
        return type;
    }
    if (role == TensorRole::attn_k || role == TensorRole::attn_q) {
        if (role == TensorRole::attn_k && shape_.n_expert == 8) return GgmlType::Q8_0;
        if (ft == kIQ3_XS) return GgmlType::IQ3_XXS;
        if (ft == kIQ3_XXS) return GgmlType::IQ2_S;
        return type;
    }
    if (role == TensorRole::ffn_down) {
        const int i = layer_of(t, i_ffn_down_++);
        if (ft == kQ2_K) return GgmlType::Q3_K;
        if (ft == kQ2_K_S) return i < n_layer / 8 ? GgmlType::Q4_K : type;
        if (ft == kIQ3_XXS && !has_imatrix_) return i < n_layer / 8 ? GgmlType::Q4_K : GgmlType::Q3_K;
        if (ft == kQ3_K_M) {
            if (i < n_layer / 16) return GgmlType::Q5_K;
            return !falcon || use_more_bits(i, n_layer) ? GgmlType::Q4_K : GgmlType::Q3_K;
        }
        if (ft == kIQ3_M && (i < n_layer / 8 || (shape_.n_expert == 8 && use_more_bits(i, n_layer))))
            return GgmlType::Q4_K;
        if (ft == kQ3_K_L) return falcon ? GgmlType::Q4_K : GgmlType::Q5_K;
        if (ft == kQ4_K_M) {
            if (falcon) return i < n_layer / 16 ? GgmlType::Q6_K : use_more_bits(i, n_layer) ? GgmlType::Q5_K : GgmlType::Q4_K;
            return use_more_bits(i, n_layer) ? GgmlType::Q6_K : type;
        }
        if ((ft == kIQ4_NL || ft == kIQ4_XS) && !has_imatrix_ && i < n_layer / 8) return GgmlType::Q5_K;
        if (ft == kQ5_K_M) return use_more_bits(i, n_layer) ? GgmlType::Q6_K : type;
        if (ft == kQ4_K_S && !falcon && i < n_layer / 8) return GgmlType::Q5_K;
        // With an imatrix, the first ffn_down layers of Q4_0/Q5_0 go to the _1 types, which
        // an imatrix keeps sane there (llama.cpp's guard; never without one, so plain
        // quantizations stay as they always were).
        if ((ft == kQ4_0 || ft == kQ5_0) && has_imatrix_ && i < n_layer / 8)
            return ft == kQ4_0 ? GgmlType::Q4_1 : GgmlType::Q5_1;
        return type;
    }
    if (role == TensorRole::attn_output) {
        if (falcon) return ft == kQ3_K_L ? GgmlType::Q4_K : type;
        if (shape_.n_expert == 8) {
            const bool bump = ft == kQ2_K || ft == kIQ3_XS || ft == kIQ3_XXS || ft == kQ3_K_S || ft == kQ3_K_M ||
                              ft == kIQ4_NL || ft == kQ4_K_S || ft == kQ4_K_M || ft == kIQ3_S || ft == kIQ3_M ||
                              ft == kIQ4_XS;
            return bump ? GgmlType::Q5_K : type;
        }
        if (ft == kQ2_K) return GgmlType::Q3_K;
        if (ft == kIQ3_XXS) return GgmlType::IQ3_S;
        if (ft == kQ3_K_M || ft == kIQ3_M) return GgmlType::Q4_K;
        if (ft == kQ3_K_L) return GgmlType::Q5_K;
        return type;
    }
    // ffn_gate / ffn_up: the middle three quarters go to IQ3_XXS in the IQ3_XS mix.
    if (role == TensorRole::ffn_gate || role == TensorRole::ffn_up) {
        const int i = layer_of(t, role == TensorRole::ffn_gate ? i_ffn_gate_++ : i_ffn_up_++);
        if (ft == kIQ3_XS && i >= n_layer / 8 && i < 7 * n_layer / 8) return GgmlType::IQ3_XXS;
    }
    return type;
}

// IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ2_M: V, the first eighth of ffn_down and
// attn_output get a bigger type; the rest keeps the mix's own.
GgmlType TypeChooser::very_low_bit_mix(TensorRole role, GgmlType type) {
    const uint32_t ft = ftype_.id;
    const GgmlType bigger = upgrades_to_iq3_s(ft) ? GgmlType::IQ3_S : GgmlType::Q2_K;
    if (role == TensorRole::attn_v || role == TensorRole::attn_qkv || role == TensorRole::attn_kv_b) {
        ++i_attn_v_;
        return shape_.n_gqa() >= 4 || shape_.n_expert >= 4 ? GgmlType::Q4_K : bigger;
    }
    if (role == TensorRole::attn_k && shape_.n_expert == 8) return GgmlType::Q4_K;
    if (role == TensorRole::ffn_down) {
        // llama.cpp counts ffn_down tensors here (not layers, even in MoE models)
        return i_ffn_down_++ < shape_.n_layer / 8 ? bigger : type;
    }
    if (role == TensorRole::attn_output) {
        if (shape_.n_expert == 8) return GgmlType::Q5_K;
        if (ft == kIQ1_S || ft == kIQ1_M) return GgmlType::IQ2_XXS;
        if (upgrades_to_iq3_s(ft)) return GgmlType::IQ3_S;
    }
    return type;
}

GgmlType TypeChooser::fallback(const TensorShape& t, GgmlType type, bool& fell_back) const {
    const int64_t ncols = t.ne[0];
    if (ncols % ggml_type_info(type).block_size == 0) return type;
    GgmlType to;
    switch (type) {
        case GgmlType::IQ1_S:
        case GgmlType::IQ1_M:
        case GgmlType::IQ2_XXS:
        case GgmlType::IQ2_XS:
        case GgmlType::IQ2_S:
        case GgmlType::IQ3_XXS:
        case GgmlType::IQ3_S:
        case GgmlType::IQ4_XS: to = GgmlType::IQ4_NL; break;
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::TQ1_0:
        case GgmlType::TQ2_0: to = GgmlType::Q4_0; break;
        case GgmlType::Q4_K: to = GgmlType::Q5_0; break;
        case GgmlType::Q5_K: to = GgmlType::Q5_1; break;
        case GgmlType::Q6_K: to = GgmlType::Q8_0; break;
        default:
            throw Error("tensor '{}': its rows of {} are not a multiple of {}'s block size {}, and llama.cpp defines "
                        "no fallback for {}", t.name, ncols, ggml_type_info(type).name, ggml_type_info(type).block_size,
                        ggml_type_info(type).name);
    }
    // Rows that are not even a multiple of 32 (rare): F16.
    if (ncols % ggml_type_info(to).block_size != 0) to = GgmlType::F16;
    fell_back = true;
    return to;
}

GgmlType TypeChooser::choose(const TensorShape& t, bool& fell_back) {
    fell_back = false;
    if (!allows_quantization(t)) return t.type;
    const TensorRole role = tensor_role(t.name);
    if (options_.token_embedding_type && role == TensorRole::token_embd) return *options_.token_embedding_type;
    if (options_.output_tensor_type && role == TensorRole::output) return *options_.output_tensor_type;
    GgmlType type = ftype_.default_type;
    if (!ggml_type_info(type).quantized) return type;  // F32 / F16 / BF16: every matrix alike
    if (!options_.pure) {
        type = mix(t, role, type);
        for (const auto& [pattern, to] : user_types_)
            if (std::regex_search(t.name.begin(), t.name.end(), pattern)) {
                type = to;
                break;
            }
    }
    return fallback(t, type, fell_back);
}

bool TypeChooser::requires_imatrix(std::string_view name, GgmlType to) const {
    if (is_token_embd(name) || name == "output.weight") return false;
    switch (to) {
        case GgmlType::IQ3_XXS:
        case GgmlType::IQ2_XXS:
        case GgmlType::IQ2_XS:
        case GgmlType::IQ2_S:
        case GgmlType::IQ1_M:
        case GgmlType::IQ1_S: return true;
        case GgmlType::Q2_K: return ftype_.id == kQ2_K_S;
        default: return false;
    }
}

}  // namespace pocket::quantize
