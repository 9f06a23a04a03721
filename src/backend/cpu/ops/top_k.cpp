// top_k: the indices of each row's k largest values, largest first; equal values go by lowest
// index, so the choice is the same on every machine and for every split. Split by rows.
#include "backend/cpu/ops.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

namespace pocket::cpu {

void op_top_k(const OpContext& ctx, Tensor& dst) {
    const Tensor& a = *dst.src[0];
    const int64_t n = a.ne[0], k = dst.ne[0];
    std::vector<int32_t> idx(static_cast<size_t>(n));
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);
        const uint8_t* row = row_ptr(a, ix);
        auto at = [&](int32_t i) { return *reinterpret_cast<const float*>(row + static_cast<size_t>(i) * a.nb[0]); };
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t x, int32_t y) {
            const float vx = at(x), vy = at(y);
            return vx > vy || (vx == vy && x < y);
        });
        std::copy_n(idx.begin(), k, reinterpret_cast<int32_t*>(row_ptr(dst, ix)));
    }
}

}  // namespace pocket::cpu
