// rms_norm and norm over each row; sums in double, as ggml does, so long rows lose nothing.
#include "backend/cpu/ops.hpp"

#include <cmath>

namespace pocket::cpu {

namespace {

template <bool kCenter> void normalize(const OpContext& ctx, Tensor& dst) {
    const Tensor& a = *dst.src[0];
    const float eps = dst.params<float>();
    const int64_t n = dst.ne[0];
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);
        const uint8_t* ar = row_ptr(a, ix);
        auto x = [&](int64_t i) { return *reinterpret_cast<const float*>(ar + static_cast<size_t>(i) * a.nb[0]); };
        float* out = reinterpret_cast<float*>(row_ptr(dst, ix));
        float mean = 0.0f;
        if constexpr (kCenter) {
            double sum = 0.0;
            for (int64_t i = 0; i < n; ++i) sum += x(i);
            mean = static_cast<float>(sum / static_cast<double>(n));
        }
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const float v = x(i) - mean;
            out[i] = v;
            sum2 += static_cast<double>(v) * v;
        }
        const float scale = 1.0f / std::sqrt(static_cast<float>(sum2 / static_cast<double>(n)) + eps);
        for (int64_t i = 0; i < n; ++i) out[i] *= scale;
    }
}

}  // namespace

void op_rms_norm(const OpContext& ctx, Tensor& dst) { normalize<false>(ctx, dst); }
void op_norm(const OpContext& ctx, Tensor& dst) { normalize<true>(ctx, dst); }

}  // namespace pocket::cpu
