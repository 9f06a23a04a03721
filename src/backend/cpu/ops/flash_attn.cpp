// Fused attention: for each (query, head), an online softmax over blocks of kv cells, so no
// n_q x n_kv score matrix is ever stored. Work is split by (query, head) pairs; each output
// row is computed by one thread in a fixed cell order, so results do not depend on -t.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/dot.hpp"
#include "backend/cpu/ops.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pocket::cpu {

namespace {

constexpr int64_t kBlock = 32;  // cells scored before each rescale of the accumulator

struct Scratch {
    float* q;
    float* k;
    float* v;
    float* acc;
    float* scores;
};

size_t scratch_floats(int64_t d, int64_t dv) { return static_cast<size_t>(2 * d + 2 * dv + kBlock); }

}  // namespace

size_t flash_attn_work_size(const Tensor& node, int nth) {
    return per_thread_bytes(scratch_floats(node.src[0]->ne[0], node.src[2]->ne[0]) * sizeof(float), nth);
}

void op_flash_attn(const OpContext& ctx, Tensor& dst) {
    const Tensor& q = *dst.src[0];
    const Tensor& k = *dst.src[1];
    const Tensor& v = *dst.src[2];
    const Tensor* mask = dst.src[3];
    const auto p = dst.params<AttnParams>();
    const int64_t d = q.ne[0], dv = v.ne[0];
    const int64_t n_head = q.ne[1], n_q = q.ne[2];
    const int64_t n_kv = k.ne[2];
    const int64_t group = n_head / k.ne[1];
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();

    float* base = ctx.thread_scratch<float>(scratch_floats(d, dv) * sizeof(float));
    const Scratch s{base, base + d, base + 2 * d, base + 2 * d + dv, base + 2 * d + 2 * dv};
    const bool k_f32 = k.type == GgmlType::F32;
    const bool v_f32 = v.type == GgmlType::F32;

    const auto [w0, w1] = ctx.range(n_q * n_head);
    for (int64_t w = w0; w < w1; ++w) {
        const int64_t t = w / n_head, h = w % n_head, hk = h / group;
        for (int64_t i = 0; i < d; ++i)
            s.q[i] = *reinterpret_cast<const float*>(static_cast<const uint8_t*>(q.element(0, h, t)) + i * q.nb[0]);
        const float* mrow = mask ? static_cast<const float*>(mask->element(0, t)) : nullptr;
        const int64_t pos = n_kv - n_q + t;
        int64_t c_begin = 0, c_end = n_kv;
        if (p.causal) {
            c_end = std::clamp<int64_t>(pos + 1, 0, n_kv);
            if (p.window > 0) c_begin = std::max<int64_t>(0, pos - p.window + 1);
        }

        float m = kNegInf, l = 0.0f;
        std::fill(s.acc, s.acc + dv, 0.0f);
        for (int64_t b = c_begin; b < c_end; b += kBlock) {
            const int64_t nb = std::min(kBlock, c_end - b);
            float bmax = kNegInf;
            for (int64_t j = 0; j < nb; ++j) {
                const int64_t c = b + j;
                const float mv = mrow ? *reinterpret_cast<const float*>(reinterpret_cast<const uint8_t*>(mrow) + c * mask->nb[0]) : 0.0f;
                if (mv == kNegInf) {
                    s.scores[j] = kNegInf;
                    continue;
                }
                const void* krow = k.element(0, hk, c);
                const float* kf = k_f32 ? static_cast<const float*>(krow) : s.k;
                if (!k_f32) row_to_f32(k.type, krow, s.k, d);
                float score = dot_f32(s.q, kf, d) * p.scale;
                if (p.softcap > 0.0f) score = p.softcap * std::tanh(score / p.softcap);
                score += mv;
                s.scores[j] = score;
                bmax = std::max(bmax, score);
            }
            if (bmax == kNegInf) continue;
            // Rescale what was accumulated under the old maximum, then add this block.
            const float m_new = std::max(m, bmax);
            const float correction = std::exp(m - m_new);  // 0 on the first block (m = -inf)
            if (correction != 1.0f) {
                for (int64_t i = 0; i < dv; ++i) s.acc[i] *= correction;
                l *= correction;
            }
            m = m_new;
            for (int64_t j = 0; j < nb; ++j) {
                if (s.scores[j] == kNegInf) continue;
                const float e = std::exp(s.scores[j] - m);
                l += e;
                const void* vrow = v.element(0, hk, b + j);
                const float* vf = v_f32 ? static_cast<const float*>(vrow) : s.v;
                if (!v_f32) row_to_f32(v.type, vrow, s.v, dv);
                for (int64_t i = 0; i < dv; ++i) s.acc[i] += e * vf[i];
            }
        }
        float* out = static_cast<float*>(dst.element(0, h, t));
        const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // a fully masked row gives zeros, not NaN
        for (int64_t i = 0; i < dv; ++i) out[i] = s.acc[i] * inv;
    }
}

}  // namespace pocket::cpu
