// get_rows: the embedding lookup. Each selected row is dequantized straight into the result.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/ops.hpp"

#include <fmt/format.h>

namespace pocket::cpu {

void op_get_rows(const OpContext& ctx, Tensor& dst) {
    const Tensor& a = *dst.src[0];
    const Tensor& ids = *dst.src[1];
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);  // ix.i1 indexes ids' dim 0, i2/i3 its dims 1/2
        const int32_t id = *static_cast<const int32_t*>(ids.element(ix.i1, ix.i2, ix.i3));
        if (id < 0 || id >= a.ne[1]) {
            ctx.fail(fmt::format("get_rows: id {} out of range [0, {}) for {}", id, a.ne[1], tensor_desc(a)));
            continue;
        }
        const uint8_t* src = static_cast<const uint8_t*>(a.data) + id * a.nb[1] + (a.ne[2] > 1 ? ix.i2 * a.nb[2] : 0);
        row_to_f32(a.type, src, reinterpret_cast<float*>(row_ptr(dst, ix)), a.ne[0]);
    }
}

}  // namespace pocket::cpu
