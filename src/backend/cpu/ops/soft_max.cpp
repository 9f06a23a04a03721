// soft_max over each row, with scale, soft-capping, an additive mask, and the causal /
// sliding-window rule (see SoftMaxParams). Sums in double, as ggml does.
#include "backend/cpu/ops.hpp"

#include <cmath>
#include <limits>

namespace pocket::cpu {

size_t soft_max_work_size(const Tensor& node, int nth) {
    return per_thread_bytes(static_cast<size_t>(node.ne[0]) * sizeof(float), nth);
}

void op_soft_max(const OpContext& ctx, Tensor& dst) {
    const Tensor& a = *dst.src[0];
    const Tensor* mask = dst.src[1];
    const auto p = dst.params<SoftMaxParams>();
    const int64_t n = dst.ne[0];
    const int64_t n_rows_q = dst.ne[1];
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();
    float* buf = ctx.thread_scratch<float>(static_cast<size_t>(n) * sizeof(float));
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);
        const uint8_t* ar = row_ptr(a, ix);
        const float* mrow = mask ? static_cast<const float*>(mask->element(0, ix.i1)) : nullptr;
        int64_t pos = n - n_rows_q + ix.i1;  // this row's kv position (causal rule)
        const bool mask_window = !p.causal && p.window > 0 && mrow;
        if (mask_window) {  // ... or the last column the mask lets through
            pos = n - 1;
            while (pos > 0 && *reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(mrow) + pos * mask->nb[0]) == kNegInf) --pos;
        }
        float max = kNegInf;
        for (int64_t i = 0; i < n; ++i) {
            float v = *reinterpret_cast<const float*>(ar + static_cast<size_t>(i) * a.nb[0]) * p.scale;
            if (p.softcap > 0.0f) v = p.softcap * std::tanh(v / p.softcap);
            if (mrow) v += *reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(mrow) + i * mask->nb[0]);
            if (p.causal && (i > pos || (p.window > 0 && i <= pos - p.window))) v = kNegInf;
            if (mask_window && i <= pos - p.window) v = kNegInf;
            buf[i] = v;
            max = std::max(max, v);
        }
        float* out = reinterpret_cast<float*>(row_ptr(dst, ix));
        if (max == kNegInf) {  // every column masked: no distribution; emit zeros, not NaN
            for (int64_t i = 0; i < n; ++i) out[i] = 0.0f;
            continue;
        }
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const float e = std::exp(buf[i] - max);
            out[i] = e;
            sum += e;
        }
        const float inv = static_cast<float>(1.0 / sum);
        for (int64_t i = 0; i < n; ++i) out[i] *= inv;
    }
}

}  // namespace pocket::cpu
