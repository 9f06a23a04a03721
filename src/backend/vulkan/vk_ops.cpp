// Which ops and operand types the Vulkan backend runs, and how (see vk_ops.hpp). An op it
// does not support runs on the CPU through the scheduler.
#include "backend/vulkan/vk_ops.hpp"

#include "backend/vulkan/vk_backend.hpp"
#include "pocket/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace pocket::vulkan {

namespace {

// Weight types with a dequant_chunk in shaders/dequant.glsl (mul_mat, get_rows).
const char* weight_shader_type(GgmlType t) {
    switch (t) {
        case GgmlType::F32: return "f32";
        case GgmlType::F16: return "f16";
        case GgmlType::BF16: return "bf16";
        case GgmlType::Q4_0: return "q4_0";
        case GgmlType::Q4_1: return "q4_1";
        case GgmlType::Q5_0: return "q5_0";
        case GgmlType::Q5_1: return "q5_1";
        case GgmlType::Q8_0: return "q8_0";
        case GgmlType::Q2_K: return "q2_k";
        case GgmlType::Q3_K: return "q3_k";
        case GgmlType::Q4_K: return "q4_k";
        case GgmlType::Q5_K: return "q5_k";
        case GgmlType::Q6_K: return "q6_k";
        case GgmlType::IQ4_NL: return "iq4_nl";
        case GgmlType::IQ4_XS: return "iq4_xs";
        default: return nullptr;
    }
}

// KV cache / copy types.
const char* store_type(GgmlType t) {
    switch (t) {
        case GgmlType::F32: return "f32";
        case GgmlType::F16: return "f16";
        case GgmlType::Q8_0: return "q8_0";
        default: return nullptr;
    }
}

// Products with at least this many columns run through mul_mm.comp's shared-memory tiles
// (8 rows x 16 columns per workgroup); below it, a wasted part of a tile would cost more
// than the tiles save.
constexpr uint64_t kTiledMinColumns = 16;

// The product shaders' SHUFFLE_BELOW: lane-tree steps below this stride run as subgroup
// shuffles (the same additions, so the same bits as through shared memory).
uint32_t shuffle_below(const Gpu& gpu) {
    return gpu.features().subgroup_shuffle ? std::min<uint32_t>(gpu.features().subgroup_size, 32) : 0;
}

bool is_f32(const Tensor* t) { return t && t->type == GgmlType::F32; }
bool rows_packed(const Tensor& t) { return t.nb[0] == t.type_info().block_bytes; }

void describe(NodeParams& p, int slot, const Tensor& t) {
    for (int d = 0; d < 4; ++d) {
        p.ne[slot][d] = static_cast<uint32_t>(t.ne[d]);
        p.nb[slot][d] = static_cast<uint32_t>(t.nb[d]);
    }
}

// A 2-D grid of workgroups covering n of them (flat_group() in the shaders).
std::array<uint32_t, 3> grid(uint64_t n) {
    const uint64_t x = std::min<uint64_t>(std::max<uint64_t>(n, 1), 65535);
    return {static_cast<uint32_t>(x), static_cast<uint32_t>((n + x - 1) / x), 1};
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// YaRN's corrected dims range, as the CPU's rope computes it.
std::array<float, 2> yarn_corr_dims(const RopeParams& p) {
    auto dim = [&](float n_rotations) {
        return static_cast<float>(p.n_rot) * std::log(static_cast<float>(p.n_ctx_orig) / (n_rotations * 2.0f * std::numbers::pi_v<float>)) /
               (2.0f * std::log(p.freq_base));
    };
    return {std::max(0.0f, std::floor(dim(p.beta_fast))), std::min(static_cast<float>(p.n_rot - 1), std::ceil(dim(p.beta_slow)))};
}

// Every operand's span and strides fit the shaders' 32-bit offsets and one binding.
bool fits(const Gpu& gpu, const Tensor& t) {
    const uint64_t limit = std::min<uint64_t>(gpu.max_binding(), uint64_t{1} << 32) - gpu.binding_align() - 4;
    if (t.nbytes() > limit) return false;
    for (int d = 0; d < 4; ++d)
        if (t.ne[d] > UINT32_MAX || t.nb[d] > limit) return false;
    return true;
}

}  // namespace

bool decodes_weight_type(GgmlType t) { return weight_shader_type(t) != nullptr; }

bool supports(const Gpu& gpu, const Tensor& node) {
    if (op_is_view(node.op)) return true;
    if (!fits(gpu, node)) return false;
    for (const Tensor* s : node.src)
        if (s && !fits(gpu, *s)) return false;
    const Tensor* a = node.src[0];
    const Tensor* b = node.src[1];
    switch (node.op) {
        case Op::get_rows: return weight_shader_type(a->type) && rows_packed(*a) && b->type == GgmlType::I32 && static_cast<uint64_t>(node.nrows()) <= 65535ull * 65535ull;
        case Op::add:
        case Op::mul:
        case Op::swiglu:
        case Op::geglu: return is_f32(a) && is_f32(b);
        case Op::scale:
        case Op::silu:
        case Op::gelu:
        case Op::tanh:
        case Op::rms_norm:
        case Op::norm: return is_f32(a);
        case Op::soft_max:  // a window over a mask (not the causal rule) stays on the CPU
            return is_f32(a) && (!b || is_f32(b)) && (node.params<SoftMaxParams>().causal || node.params<SoftMaxParams>().window == 0 || !b);
        case Op::mul_mat:
            return weight_shader_type(a->type) && rows_packed(*a) && is_f32(b) && node.ne[0] <= 65535 * 8 && node.ne[1] <= 65535 * 8 &&
                   node.ne[2] * node.ne[3] <= 65535;
        case Op::top_k: return is_f32(a) && a->ne[0] <= 4096;
        case Op::mul_mat_id:
            return weight_shader_type(a->type) && rows_packed(*a) && is_f32(b) && node.src[2]->type == GgmlType::I32 &&
                   node.ne[0] <= 65535 * 16 && node.ne[1] <= 65535 && node.ne[2] <= 65535;
        case Op::rope: return is_f32(a) && (!node.src[2] || is_f32(node.src[2]));
        case Op::rope_shift: return (a->type == GgmlType::F32 || a->type == GgmlType::F16) && (!node.src[2] || is_f32(node.src[2]));
        case Op::cont: return (a->type == GgmlType::F32 || a->type == GgmlType::F16) && node.type == a->type;
        case Op::cpy: {
            if (a->type == b->type && rows_packed(*a) && rows_packed(*b)) return store_type(a->type) != nullptr;
            return (a->type == GgmlType::F32 || a->type == GgmlType::F16) && store_type(b->type) &&
                   (b->type != GgmlType::Q8_0 || rows_packed(*b));
        }
        case Op::set_rows: return store_type(a->type) && is_f32(b) && rows_packed(*a);
        case Op::concat: return is_f32(a) && is_f32(b);
        case Op::flash_attn: {
            const Tensor* k = node.src[1];
            const Tensor* v = node.src[2];
            return is_f32(a) && store_type(k->type) && k->type == v->type && a->ne[0] <= 256 && v->ne[0] <= 256 &&
                   (!node.src[3] || is_f32(node.src[3])) && a->ne[2] <= 65535;
        }
        default: return false;
    }
}

Dispatch encode(const Gpu& gpu, const Tensor& node, NodeParams& p) {
    p = {};
    for (int s = 0; s < 4; ++s)
        if (node.src[s]) describe(p, s, *node.src[s]);
    describe(p, 4, node);
    const Tensor* a = node.src[0];
    Dispatch d;
    const uint64_t n_elements = static_cast<uint64_t>(node.nelements());
    switch (node.op) {
        case Op::get_rows:
            d.shader = std::string("get_rows_") + weight_shader_type(a->type);
            d.groups = grid(static_cast<uint64_t>(node.nrows()));
            break;
        case Op::add: d.shader = "add"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::mul: d.shader = "mul"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::swiglu: d.shader = "swiglu"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::geglu: d.shader = "geglu"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::silu: d.shader = "silu"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::gelu: d.shader = "gelu"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::tanh: d.shader = "tanh"; d.groups = grid(ceil_div(n_elements, 256)); break;
        case Op::top_k: d.shader = "top_k"; d.groups = grid(ceil_div(static_cast<uint64_t>(a->nrows()), 64)); break;
        case Op::scale:
            d.shader = "scale";
            p.f[0] = node.params<float>();
            d.groups = grid(ceil_div(n_elements, 256));
            break;
        case Op::rms_norm:
        case Op::norm:
            d.shader = node.op == Op::rms_norm ? "rms_norm" : "norm";
            p.f[0] = node.params<float>();
            d.groups = grid(static_cast<uint64_t>(node.nrows()));
            break;
        case Op::soft_max: {
            const auto sp = node.params<SoftMaxParams>();
            d.shader = "soft_max";
            p.f[0] = sp.scale;
            p.f[1] = sp.softcap;
            p.i[0] = sp.causal;
            p.i[1] = sp.window;
            p.i[2] = node.src[1] ? 1 : 0;
            d.groups = grid(static_cast<uint64_t>(node.nrows()));
            break;
        }
        case Op::mul_mat: {
            // Three shapes of one summation order (same bits whichever runs): one column
            // (decode), a few columns, and prompt batches through shared-memory tiles. Q4_0 and
            // Q8_0 on a device with fast int8 dots: mul_mat_q8.comp for all shapes (its own order).
            const uint64_t n_rows = static_cast<uint64_t>(node.ne[0]), n_cols = static_cast<uint64_t>(node.ne[1]);
            const bool int8 = gpu.features().int8_products && (a->type == GgmlType::Q4_0 || a->type == GgmlType::Q8_0);
            const bool tiled = !int8 && gpu.features().shared_tiles && n_cols >= kTiledMinColumns;
            d.shader = std::string(int8 ? "mul_mat_q8_" : tiled ? "mul_mm_" : "mul_mat_") + weight_shader_type(a->type);
            d.spec2 = shuffle_below(gpu);
            if (tiled) {
                d.groups = {static_cast<uint32_t>(ceil_div(n_rows, 8)), static_cast<uint32_t>(ceil_div(n_cols, 16)),
                            static_cast<uint32_t>(node.ne[2] * node.ne[3])};
            } else {
                d.spec0 = 4;                    // rows per thread
                d.spec1 = n_cols == 1 ? 1 : 8;  // columns per thread
                d.groups = {static_cast<uint32_t>(ceil_div(n_rows, 4 * d.spec0)), static_cast<uint32_t>(ceil_div(n_cols, d.spec1)),
                            static_cast<uint32_t>(node.ne[2] * node.ne[3])};
            }
            break;
        }
        case Op::mul_mat_id:
            // One workgroup per (slot, token) and 16 rows: the decode shape of mul_mat, so each
            // output is summed in mul_mat's order whatever the batch.
            d.shader = std::string("mul_mat_id_") + weight_shader_type(a->type);
            d.spec0 = 4;
            d.spec1 = 1;
            d.spec2 = shuffle_below(gpu);
            d.groups = {static_cast<uint32_t>(ceil_div(static_cast<uint64_t>(node.ne[0]), 16)), static_cast<uint32_t>(node.ne[1]),
                        static_cast<uint32_t>(node.ne[2])};
            break;
        case Op::rope:
        case Op::rope_shift: {
            const auto rp = node.params<RopeParams>();
            if (node.op == Op::rope) d.shader = "rope";
            else d.shader = a->type == GgmlType::F16 ? "rope_shift_f16" : "rope_shift_f32";
            p.i[0] = static_cast<int32_t>(rp.mode);
            p.i[1] = rp.n_rot;
            p.i[2] = rp.n_ctx_orig;
            p.i[3] = node.src[2] ? 1 : 0;
            p.f[0] = rp.freq_base;
            p.f[1] = rp.freq_scale;
            p.f[2] = rp.ext_factor;
            p.f[3] = rp.attn_factor;
            const auto corr = yarn_corr_dims(rp);
            p.f2[0] = rp.beta_fast;
            p.f2[1] = rp.beta_slow;
            p.f2[2] = corr[0];
            p.f2[3] = corr[1];
            d.groups = grid(ceil_div(static_cast<uint64_t>(rp.n_rot / 2) * a->ne[1] * a->ne[2], 256));
            break;
        }
        case Op::cont:
            d.shader = std::string("copy_") + store_type(a->type) + "_" + store_type(node.type);
            d.groups = grid(ceil_div(n_elements, 256));
            break;
        case Op::cpy: {
            const Tensor* dst = node.src[1];
            if (a->type == dst->type && rows_packed(*a) && rows_packed(*dst)) {
                d.shader = "copy_raw";
                p.i[0] = static_cast<int32_t>(a->row_bytes() / 2);
                d.groups = grid(ceil_div(static_cast<uint64_t>(p.i[0]) * a->nrows(), 256));
            } else {
                d.shader = std::string("copy_") + store_type(a->type) + "_" + store_type(dst->type);
                const uint64_t per = dst->type == GgmlType::Q8_0 ? 32 : 1;
                d.groups = grid(ceil_div(static_cast<uint64_t>(a->nelements()) / per, 256));
            }
            break;
        }
        case Op::set_rows: {
            d.shader = std::string("set_rows_") + store_type(a->type);
            const uint64_t per = a->type == GgmlType::Q8_0 ? 32 : 1;
            d.groups = grid(ceil_div(static_cast<uint64_t>(node.src[1]->nelements()) / per, 256));
            break;
        }
        case Op::concat:
            d.shader = "concat";
            p.i[0] = node.params<int32_t>();
            d.groups = grid(ceil_div(n_elements, 256));
            break;
        case Op::flash_attn: {
            const auto ap = node.params<AttnParams>();
            d.shader = std::string("flash_attn_") + store_type(node.src[1]->type);
            p.f[0] = ap.scale;
            p.f[1] = ap.softcap;
            p.i[0] = ap.causal;
            p.i[1] = ap.window;
            p.i[2] = node.src[3] ? 1 : 0;
            d.groups = {static_cast<uint32_t>(a->ne[1]), static_cast<uint32_t>(a->ne[2]), 1};
            break;
        }
        default: throw Error("Vulkan: no shader for {}", op_name(node.op));
    }
    return d;
}

}  // namespace pocket::vulkan
