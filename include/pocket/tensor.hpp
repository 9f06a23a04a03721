#pragma once
// pocket::Tensor: up to 4 dimensions in ggml order (ne[0] varies fastest), byte strides nb,
// a GgmlType, and a data pointer. A tensor is either
//  - a leaf whose data lives outside any graph: a weight pointing into the mmapped GGUF file
//    (tensor_from_gguf), or a persistent tensor such as a KV cache placed in a backend Buffer
//    (Buffer::place). Create these once and keep them; graphs refer to them by pointer;
//  - a graph input (Graph::input): memory in the graph's arena, filled before each compute;
//  - an op node (Graph::mul_mat ...), whose result the memory planner places in the arena;
//  - a view (Graph::view / reshape / permute / transpose): shares its source's memory, copies
//    nothing, and may have any strides.
// Plain data: copying a Tensor copies the description, never the elements.
#include "pocket/ggml_type.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace pocket {

struct GgufTensorInfo;
class Buffer;

inline constexpr int kMaxDims = 4;
inline constexpr int kMaxSrc = 5;

// What produced a tensor. `none` is a leaf (weight, persistent tensor or graph input).
enum class Op : uint8_t {
    none,
    // views: no computation, the result aliases src[0]'s memory
    view, reshape, permute, transpose,
    // element-wise and row ops (all f32 results)
    get_rows, add, mul, scale, rms_norm, norm, silu, gelu, tanh, swiglu, geglu, soft_max,
    // linear algebra; mixture of experts
    mul_mat, mul_mat_id, top_k,
    // position encoding
    rope, rope_shift,
    // layout and type changes
    cont, cpy, set_rows, concat,
    // attention
    flash_attn,
};
std::string_view op_name(Op op);
inline bool op_is_view(Op op) { return op == Op::view || op == Op::reshape || op == Op::permute || op == Op::transpose; }

// Rope variants, as ggml numbers them: NORM rotates adjacent pairs (x[2i], x[2i+1]) (llama),
// NEOX rotates halves (x[i], x[i + n_rot/2]) (qwen2, phi3, gemma, gpt-neox).
enum class RopeMode : int32_t { norm = 0, neox = 2 };

// Rotary embedding parameters (ggml_rope_ext's). Angle for pair i of a token at position p:
//   theta_i = p * freq_base^(-2i/n_rot) / freq_factors[i]   (freq_factors optional: llama3)
// then YaRN (ext_factor != 0) interpolates between theta*freq_scale and theta as in ggml,
// and scales cos/sin by attn_factor (times YaRN's magnitude correction).
struct RopeParams {
    RopeMode mode = RopeMode::norm;
    int32_t n_rot = 0;           // rotated dims (<= ne[0]); dims past n_rot pass through
    int32_t n_ctx_orig = 0;      // original training context (YaRN)
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;     // 1 / linear context-scaling factor
    float ext_factor = 0.0f;     // YaRN extrapolation mix; 0 disables YaRN
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
};

// soft_max(x) over ne[0] for each row, after: x*scale, then cap*tanh(x/cap) when softcap > 0,
// then + mask (broadcast over rows/heads), then the causal rule when causal: row r of ne[1]
// rows sits at kv position (ne[0] - ne[1] + r) and sees kv columns c <= that position, and,
// with window > 0, only c > position - window (sliding-window attention). A window without
// the causal rule applies over the mask, as AttnParams::window does: the row's position is
// the last column its mask row lets through.
struct SoftMaxParams {
    float scale = 1.0f;
    float softcap = 0.0f;
    int32_t causal = 0;
    int32_t window = 0;
};

// Fused attention (see Graph::flash_attn).
struct AttnParams {
    float scale = 1.0f;          // usually 1/sqrt(head_dim)
    float softcap = 0.0f;        // gemma2: scores -> softcap * tanh(scores / softcap)
    int32_t causal = 0;          // implicit causal mask: query t sits at kv position n_kv - n_q + t
    // Sliding window length (0: unlimited): the query sees only the `window` cells ending at its
    // own, which with causal is its kv position and with a mask the last cell its row lets
    // through (a causal mask always lets a query see itself). Cells masked in between stay
    // masked. Gemma's layers differ in window, so it is the layer's, not the mask's.
    int32_t window = 0;
};

// Flags on a tensor.
enum TensorFlag : uint32_t {
    kTensorInput = 1u << 0,   // graph input: memory in the arena, filled by the caller
    kTensorOutput = 1u << 1,  // kept alive to the end of compute, never reused
};

struct Tensor {
    GgmlType type = GgmlType::F32;
    std::array<int64_t, kMaxDims> ne{1, 1, 1, 1};  // elements per dim, ne[0] fastest
    std::array<size_t, kMaxDims> nb{};              // bytes per step in each dim (nb[0] = type size for
                                                    // unquantized types, block bytes for quantized)
    void* data = nullptr;        // set for leaves; for nodes once the graph is allocated
    Buffer* buffer = nullptr;    // the buffer holding data; null for host memory no device owns (mmap)

    Op op = Op::none;
    std::array<Tensor*, kMaxSrc> src{};   // operands, null-terminated
    Tensor* view_src = nullptr;           // views: the tensor whose memory this one shares
    size_t view_offs = 0;                 // views: byte offset into view_src's data
    alignas(8) std::array<uint8_t, 64> op_params{};  // per-op parameters (typed access below)

    uint32_t flags = 0;
    int32_t layer = -1;          // the model layer a node belongs to (Graph::set_layer): used by the
                                 // Scheduler to pick a backend; -1 before the first layer
    int32_t index = -1;          // position in its graph (internal)
    char name[48] = {};

    // Geometry.
    int64_t nelements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t nrows() const { return ne[1] * ne[2] * ne[3]; }
    size_t row_bytes() const;     // bytes of one contiguous row of ne[0] elements
    size_t nbytes() const;        // bytes spanned in memory, from data to the end of the last element
    bool is_contiguous() const;   // rows packed, dims in order, no gaps
    bool is_quantized() const;
    const GgmlTypeInfo& type_info() const { return ggml_type_info(type); }

    void set_name(std::string_view n);
    std::string_view get_name() const { return name; }

    // Typed access to op_params (each op stores one trivially-copyable struct).
    template <class P> P params() const {
        static_assert(std::is_trivially_copyable_v<P> && sizeof(P) <= sizeof(op_params));
        P p;
        std::memcpy(&p, op_params.data(), sizeof(P));
        return p;
    }
    template <class P> void set_params(const P& p) {
        static_assert(std::is_trivially_copyable_v<P> && sizeof(P) <= sizeof(op_params));
        std::memcpy(op_params.data(), &p, sizeof(P));
    }

    // Element pointer (data + i0*nb0 + ...); for unquantized types.
    void* element(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
        return static_cast<uint8_t*>(data) + i0 * nb[0] + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
    }
    // The base tensor this one's memory belongs to (follows view chains).
    const Tensor* base() const { const Tensor* t = this; while (t->view_src) t = t->view_src; return t; }
    Tensor* base() { Tensor* t = this; while (t->view_src) t = t->view_src; return t; }
};

// A contiguous tensor description (nb from ne and type). Throws pocket::Error when ne[0] is
// not a multiple of the type's block size or a dimension is negative.
Tensor make_tensor(GgmlType type, std::array<int64_t, kMaxDims> ne, void* data = nullptr,
                   std::string_view name = {});

// A weight: describes the GGUF tensor and points at its bytes in the mapping (read-only by use).
Tensor tensor_from_gguf(const GgufTensorInfo& info);

// Copies bytes into / out of a tensor wherever it lives (through its buffer's backend when it
// has one, memcpy otherwise). offset and size are in bytes of the tensor's memory.
void tensor_set(Tensor& t, const void* src, size_t size, size_t offset = 0);
void tensor_get(const Tensor& t, void* dst, size_t size, size_t offset = 0);

// Shape as text, e.g. "f16[64,4,128]" (for error messages).
std::string tensor_desc(const Tensor& t);

}  // namespace pocket
