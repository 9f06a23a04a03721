// Which ops and operand types the CUDA backend runs (the kernels in kernels/*.cu). An op it
// declines runs on the CPU through the scheduler.
#include "backend/cuda/cuda_device.hpp"

namespace pocket::cuda {

namespace {

// Weight types the kernels decode (kernels/dequant.cuh): mul_mat, mul_mat_id, get_rows.
bool weight_type(GgmlType t) {
    switch (t) {
        case GgmlType::F32:
        case GgmlType::F16:
        case GgmlType::BF16:
        case GgmlType::Q4_0:
        case GgmlType::Q4_1:
        case GgmlType::Q5_0:
        case GgmlType::Q5_1:
        case GgmlType::Q8_0:
        case GgmlType::Q2_K:
        case GgmlType::Q3_K:
        case GgmlType::Q4_K:
        case GgmlType::Q5_K:
        case GgmlType::Q6_K:
        case GgmlType::IQ4_NL:
        case GgmlType::IQ4_XS: return true;
        default: return false;
    }
}

// KV cache and copy types.
bool store_type(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::Q8_0; }

bool is_f32(const Tensor* t) { return t && t->type == GgmlType::F32; }
bool rows_packed(const Tensor& t) { return t.nb[0] == t.type_info().block_bytes; }

constexpr int64_t kGridYZ = 65535;   // CUDA's limit on gridDim.y and gridDim.z

}  // namespace

bool CudaDevice::holds_weight_type(GgmlType t) const { return weight_type(t); }

bool supports(const Tensor& node) {
    if (op_is_view(node.op)) return true;
    const Tensor* a = node.src[0];
    const Tensor* b = node.src[1];
    switch (node.op) {
        case Op::get_rows: return weight_type(a->type) && rows_packed(*a) && b->type == GgmlType::I32;
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
            return weight_type(a->type) && rows_packed(*a) && is_f32(b) && node.ne[2] * node.ne[3] <= kGridYZ && node.ne[1] <= kGridYZ * 8;
        case Op::top_k: return is_f32(a) && a->ne[0] <= 4096;
        case Op::mul_mat_id:
            return weight_type(a->type) && rows_packed(*a) && is_f32(b) && node.src[2]->type == GgmlType::I32 && node.ne[1] <= kGridYZ &&
                   node.ne[2] <= kGridYZ;
        case Op::rope: return is_f32(a) && (!node.src[2] || is_f32(node.src[2]));
        case Op::rope_shift: return (a->type == GgmlType::F32 || a->type == GgmlType::F16) && (!node.src[2] || is_f32(node.src[2]));
        case Op::cont: return (a->type == GgmlType::F32 || a->type == GgmlType::F16) && node.type == a->type;
        case Op::cpy:
            if (a->type == b->type && rows_packed(*a) && rows_packed(*b)) return store_type(a->type);
            return (a->type == GgmlType::F32 || a->type == GgmlType::F16) && store_type(b->type) &&
                   (b->type != GgmlType::Q8_0 || rows_packed(*b));
        case Op::set_rows: return store_type(a->type) && is_f32(b) && rows_packed(*a);
        case Op::concat: return is_f32(a) && is_f32(b);
        case Op::flash_attn: {
            const Tensor* k = node.src[1];
            const Tensor* v = node.src[2];
            return is_f32(a) && store_type(k->type) && k->type == v->type && a->ne[0] <= 256 && v->ne[0] <= 256 &&
                   (!node.src[3] || is_f32(node.src[3])) && a->ne[2] <= kGridYZ;
        }
        default: return false;
    }
}

}  // namespace pocket::cuda
