// Layout and type changes: cont, cpy (into a view, e.g. the KV cache), set_rows (rows chosen
// by an index tensor), concat. Rows pass through an f32 row in scratch when types differ.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/ops.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace pocket::cpu {

namespace {

// Reads one row of `t` (f32/f16/q8_0, any element stride for unquantized types) as f32.
const float* read_row(const Tensor& t, const uint8_t* row, int64_t n, float* tmp) {
    if (t.type == GgmlType::F32 && t.nb[0] == sizeof(float)) return reinterpret_cast<const float*>(row);
    if (t.nb[0] == t.type_info().block_bytes) {
        row_to_f32(t.type, row, tmp, n);
        return tmp;
    }
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* e = row + i * t.nb[0];
        tmp[i] = t.type == GgmlType::F32 ? *reinterpret_cast<const float*>(e)
                                         : fp16_to_fp32(*reinterpret_cast<const uint16_t*>(e));
    }
    return tmp;
}

// Writes one f32 row into `t` (f32/f16/q8_0; strided for unquantized types).
void write_row(const Tensor& t, uint8_t* row, const float* src, int64_t n) {
    if (t.nb[0] == t.type_info().block_bytes) {
        row_from_f32(t.type, src, row, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        uint8_t* e = row + i * t.nb[0];
        if (t.type == GgmlType::F32)
            *reinterpret_cast<float*>(e) = src[i];
        else
            *reinterpret_cast<uint16_t*>(e) = fp32_to_fp16(src[i]);
    }
}

// Copies row r of src into row r of dst (rows counted in each tensor's own shape).
void copy_rows(const OpContext& ctx, const Tensor& src, const Tensor& dst) {
    const int64_t n = src.ne[0];
    float* tmp = ctx.thread_scratch<float>(static_cast<size_t>(n) * sizeof(float));
    const bool same_bytes = src.type == dst.type && src.nb[0] == src.type_info().block_bytes &&
                            dst.nb[0] == dst.type_info().block_bytes;
    const auto [r0, r1] = ctx.range(src.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* in = row_ptr(src, row_index(src, r));
        uint8_t* out = row_ptr(dst, row_index(dst, r));
        if (same_bytes)
            std::memcpy(out, in, src.row_bytes());
        else
            write_row(dst, out, read_row(src, in, n, tmp), n);
    }
}

}  // namespace

size_t copy_work_size(const Tensor& node, int nth) {
    // Every copy op converts rows of ne[0] elements (source and destination rows agree).
    return per_thread_bytes(static_cast<size_t>(std::max(node.src[0]->ne[0], node.ne[0])) * sizeof(float), nth);
}

void op_cont(const OpContext& ctx, Tensor& dst) { copy_rows(ctx, *dst.src[0], dst); }

void op_cpy(const OpContext& ctx, Tensor& dst) { copy_rows(ctx, *dst.src[0], *dst.src[1]); }

void op_set_rows(const OpContext& ctx, Tensor& dst) {
    const Tensor& target = *dst.src[0];
    const Tensor& src = *dst.src[1];
    const Tensor& idx = *dst.src[2];
    const int64_t n = src.ne[0];
    float* tmp = ctx.thread_scratch<float>(static_cast<size_t>(n) * sizeof(float));
    const auto [r0, r1] = ctx.range(src.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(src, r);
        const int32_t row = *static_cast<const int32_t*>(idx.element(r % idx.ne[0], r / idx.ne[0]));
        if (row < 0 || row >= target.ne[1]) {
            ctx.fail(fmt::format("set_rows: row {} out of range [0, {}) for {}", row, target.ne[1], tensor_desc(target)));
            continue;
        }
        uint8_t* out = static_cast<uint8_t*>(target.data) + static_cast<size_t>(row) * target.nb[1];
        write_row(target, out, read_row(src, row_ptr(src, ix), n, tmp), n);
    }
}

void op_concat(const OpContext& ctx, Tensor& dst) {
    const Tensor& a = *dst.src[0];
    const Tensor& b = *dst.src[1];
    const int dim = dst.params<int32_t>();
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);
        float* out = reinterpret_cast<float*>(row_ptr(dst, ix));
        const int64_t coord[4] = {0, ix.i1, ix.i2, ix.i3};
        for (int64_t i = 0; i < dst.ne[0]; ++i) {
            int64_t c[4] = {i, coord[1], coord[2], coord[3]};
            const Tensor* from = &a;
            if (c[dim] >= a.ne[dim]) {
                c[dim] -= a.ne[dim];
                from = &b;
            }
            out[i] = *static_cast<const float*>(from->element(c[0], c[1], c[2], c[3]));
        }
    }
}

}  // namespace pocket::cpu
