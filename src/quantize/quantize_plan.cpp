// The whole job decided up front: every tensor's output type, its imatrix, and every reason
// to refuse, so that a refusal never leaves a half-written file behind.
#include "kernels/kernels.hpp"
#include "pocket/error.hpp"
#include "pocket/quantize.hpp"
#include "type_choice.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace pocket {
namespace {

// llama.cpp's tensor order (llama_model_loader's weight_name_comparer): tensors outside the
// blocks first, then block by block, by name within each. The attn_v and ffn_down counters
// of the mixes count in this order, and the output file keeps it.
int layer_for_order(std::string_view name) {
    // As sscanf("blk.%d."): the number right after "blk.", whatever follows it.
    if (!name.starts_with("blk.")) return -1;
    size_t i = 4;
    bool neg = false;
    if (i < name.size() && (name[i] == '-' || name[i] == '+')) neg = name[i++] == '-';
    if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
    long v = 0;
    while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && v < 1000000) v = v * 10 + (name[i++] - '0');
    return static_cast<int>(neg ? -v : v);
}

std::vector<const GgufTensorInfo*> llama_cpp_order(const GgufFile& in) {
    std::vector<const GgufTensorInfo*> order;
    for (const auto& t : in.tensors()) order.push_back(&t);
    std::stable_sort(order.begin(), order.end(), [](const GgufTensorInfo* a, const GgufTensorInfo* b) {
        const int la = layer_for_order(a->name), lb = layer_for_order(b->name);
        return la != lb ? la < lb : a->name < b->name;
    });
    return order;
}

// The llama_ftype a file of mostly this type would have (llama.cpp's guess for a file
// without general.file_type).
uint32_t ftype_of_dominant_type(GgmlType t) {
    switch (t) {
        case GgmlType::F16: return 1;
        case GgmlType::BF16: return 32;
        case GgmlType::Q4_0: return 2;
        case GgmlType::Q4_1: return 3;
        case GgmlType::Q5_0: return 8;
        case GgmlType::Q5_1: return 9;
        case GgmlType::Q8_0: return 7;
        case GgmlType::Q2_K: return 10;
        case GgmlType::Q3_K: return 12;
        case GgmlType::Q4_K: return 15;
        case GgmlType::Q5_K: return 17;
        case GgmlType::Q6_K: return 18;
        case GgmlType::TQ1_0: return 36;
        case GgmlType::TQ2_0: return 37;
        case GgmlType::IQ2_XXS: return 19;
        case GgmlType::IQ2_XS: return 20;
        case GgmlType::IQ2_S: return 28;
        case GgmlType::IQ3_XXS: return 23;
        case GgmlType::IQ1_S: return 24;
        case GgmlType::IQ1_M: return 31;
        case GgmlType::IQ4_NL: return 25;
        case GgmlType::IQ4_XS: return 30;
        case GgmlType::IQ3_S: return 26;
        default: return 0;
    }
}

// COPY keeps the input's file type: its general.file_type, or else llama.cpp's guess from the
// most common tensor type, marked as guessed (LLAMA_FTYPE_GUESSED, 1024) as llama.cpp writes it.
uint32_t input_file_type(const GgufFile& in, const std::vector<const GgufTensorInfo*>& order) {
    if (auto ft = in.find_as<uint32_t>("general.file_type")) return *ft;
    std::map<GgmlType, uint32_t> count;
    uint32_t best_count = 0;
    GgmlType best = GgmlType::F32;
    for (const auto* t : order)
        if (++count[t->type] > best_count) best_count = count[t->type], best = t->type;
    return ftype_of_dominant_type(best) | 1024u;
}

bool is_float_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16; }

// Types quantize can write (the activation-only types Q8_1 and Q8_K never appear in models).
bool can_produce(GgmlType t) {
    if (t == GgmlType::Q8_1 || t == GgmlType::Q8_K) return false;
    const auto* k = kernels::type_kernels(t);
    return k && k->quantize_row;
}

void check_conversion(const GgufFile& in, const TensorPlan& p, const QuantizeOptions& o) {
    const auto& from = ggml_type_info(p.from);
    const auto& to = ggml_type_info(p.to);
    if (!can_produce(p.to)) throw Error("{}: tensor '{}': pocket cannot write type {}", in.path(), p.name, to.name);
    if (!ggml_row_bytes(p.to, static_cast<uint64_t>(p.ne[0])))
        throw Error("{}: tensor '{}': its rows of {} are not a multiple of {}'s block size {}", in.path(), p.name, p.ne[0],
                    to.name, to.block_size);
    if (is_float_type(p.from)) return;
    if (!from.quantized) throw Error("{}: tensor '{}': cannot convert type {} to {}", in.path(), p.name, from.name, to.name);
    if (!o.allow_requantize)
        throw Error("{}: tensor '{}' is already quantized ({}); requantizing to {} needs --allow-requantize", in.path(),
                    p.name, from.name, to.name);
    const auto* k = kernels::type_kernels(p.from);
    if (!k || !k->dequantize_row)
        throw Error("{}: tensor '{}': pocket cannot dequantize type {}", in.path(), p.name, from.name);
}

// The tensor's imatrix row(s), or null. A size mismatch is an error (a stale imatrix for
// another model), except for token_embd, which imatrix files never fit.
const float* imatrix_for(const GgufFile& in, const TensorPlan& p, const Imatrix& m) {
    const auto it = m.values.find(p.name);
    if (it == m.values.end()) return nullptr;
    const auto expected = static_cast<size_t>(p.ne[0] * p.ne[2]);
    if (it->second.size() == expected) return it->second.data();
    if (quantize::tensor_role(p.name) == quantize::TensorRole::token_embd) return nullptr;
    throw Error("{}: tensor '{}': the imatrix {} has {} values for it, the tensor needs {}", in.path(), p.name, m.path,
                it->second.size(), expected);
}

}  // namespace

QuantizePlan plan_quantization(const GgufFile& in, const QuantFileType& type, const QuantizeOptions& options) {
    const auto order = llama_cpp_order(in);
    int n_attn_v = 0;
    bool has_output = false;
    for (const auto* t : order) {
        // ggml keeps a tensor name in 64 bytes with its NUL: pocket's files must load in llama.cpp.
        if (t->name.size() > 63)
            throw Error("{}: tensor name '{}' is {} characters long; llama.cpp loads names of at most 63", in.path(), t->name,
                        t->name.size());
        const auto role = quantize::tensor_role(t->name);
        n_attn_v += role == quantize::TensorRole::attn_v || role == quantize::TensorRole::attn_qkv ||
                    role == quantize::TensorRole::attn_kv_b;
        has_output |= role == quantize::TensorRole::output;
    }
    const bool has_imatrix = options.imatrix && !options.imatrix->values.empty();
    quantize::TypeChooser chooser(quantize::model_shape(in), type, options, has_imatrix, n_attn_v, has_output);

    QuantizePlan plan;
    plan.file_type = type.copy ? input_file_type(in, order) : type.id;
    for (const auto* t : order) {
        TensorPlan p;
        p.name = std::string(t->name);
        p.ne = t->ne;
        p.n_dims = t->n_dims;
        p.from = t->type;
        p.source = t;
        p.bytes_in = t->n_bytes;
        const quantize::TensorShape shape{t->name, t->ne, t->n_dims, t->type};
        try {
            p.to = chooser.choose(shape, p.fell_back);
        } catch (const Error& e) {
            throw Error("{}: {}", in.path(), e.what());
        }
        plan.n_fallback += p.fell_back;
        if (p.converted()) {
            check_conversion(in, p, options);
            if (has_imatrix) p.imatrix = imatrix_for(in, p, *options.imatrix);
            if (!p.imatrix && chooser.requires_imatrix(p.name, p.to))
                throw Error("{}: tensor '{}': {} quantizes it to {}, which needs an importance matrix (--imatrix){}",
                            in.path(), p.name, type.name, ggml_type_info(p.to).name,
                            has_imatrix ? ", and the imatrix has no entry for it" : "");
        }
        p.bytes_out = p.converted() ? *ggml_row_bytes(p.to, static_cast<uint64_t>(p.ne[0])) * static_cast<uint64_t>(p.n_rows())
                                    : p.bytes_in;
        plan.tensors.push_back(std::move(p));
    }
    return plan;
}

}  // namespace pocket
