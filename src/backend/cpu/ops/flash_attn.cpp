// Fused attention: an online softmax over blocks of kv cells, so no n_q x n_kv score matrix
// is ever stored. Work is split by (query, kv head) pairs; the query heads that share a kv
// head (grouped-query attention) are processed together, so each K and V row is converted to
// f32 once per group rather than once per head. Every output row is computed by one thread
// in a fixed cell order, so results do not depend on -t.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/ops.hpp"
#include "kernels/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pocket::cpu {

namespace {

constexpr int64_t kBlock = 32;  // cells scored before each rescale of the accumulators

// Per-thread scratch: one converted K row and V row, then per head of the group its query,
// accumulator, block of scores, running maximum and running sum.
size_t scratch_floats(int64_t d, int64_t dv, int64_t group) {
    return static_cast<size_t>(d + dv + group * (d + dv + kBlock + 2));
}

}  // namespace

size_t flash_attn_work_size(const Tensor& node, int nth) {
    const int64_t group = node.src[0]->ne[1] / node.src[1]->ne[1];
    return per_thread_bytes(scratch_floats(node.src[0]->ne[0], node.src[2]->ne[0], group) * sizeof(float), nth);
}

void op_flash_attn(const OpContext& ctx, Tensor& dst) {
    const Tensor& q = *dst.src[0];
    const Tensor& k = *dst.src[1];
    const Tensor& v = *dst.src[2];
    const Tensor* mask = dst.src[3];
    const auto p = dst.params<AttnParams>();
    const int64_t d = q.ne[0], dv = v.ne[0];
    const int64_t n_q = q.ne[2];
    const int64_t n_head_kv = k.ne[1], n_kv = k.ne[2];
    const int64_t group = q.ne[1] / n_head_kv;
    constexpr float kNegInf = -std::numeric_limits<float>::infinity();

    float* krow_f = ctx.thread_scratch<float>(scratch_floats(d, dv, group) * sizeof(float));
    float* vrow_f = krow_f + d;
    float* qs = vrow_f + dv;              // group x d
    float* accs = qs + group * d;         // group x dv
    float* scores = accs + group * dv;    // group x kBlock
    float* ms = scores + group * kBlock;  // running maximum per head
    float* ls = ms + group;               // running sum per head
    const bool k_f32 = k.type == GgmlType::F32;
    const bool v_f32 = v.type == GgmlType::F32;
    const ToF32Fn k_to_f32 = to_f32_fn(k.type);
    const ToF32Fn v_to_f32 = to_f32_fn(v.type);
    // Scores in f32 with the kernels' f32 dot (fixed summation order for a given n).
    const kernels::VecDotFn dot = kernels::type_kernels(GgmlType::F32)->vec_dot;

    // The cells query t attends to; the same for each of its kv heads, so found once per t.
    int64_t bounds_of = -1, c_begin = 0, c_end = 0;
    const auto [w0, w1] = ctx.range(n_q * n_head_kv);
    for (int64_t w = w0; w < w1; ++w) {
        const int64_t t = w / n_head_kv, hk = w % n_head_kv;
        for (int64_t g = 0; g < group; ++g) {
            const auto* qrow = static_cast<const uint8_t*>(q.element(0, hk * group + g, t));
            for (int64_t i = 0; i < d; ++i) qs[g * d + i] = *reinterpret_cast<const float*>(qrow + i * q.nb[0]);
            std::fill(accs + g * dv, accs + (g + 1) * dv, 0.0f);
            ms[g] = kNegInf;
            ls[g] = 0.0f;
        }
        const auto* mrow = mask ? static_cast<const uint8_t*>(mask->element(0, t)) : nullptr;
        if (bounds_of != t) {
            bounds_of = t;
            const int64_t pos = n_kv - n_q + t;
            c_begin = 0;
            c_end = n_kv;
            if (p.causal) {
                c_end = std::clamp<int64_t>(pos + 1, 0, n_kv);
                if (p.window > 0) c_begin = std::max<int64_t>(0, pos - p.window + 1);
            }
            // Blocks start at the first cell the mask lets through, so a sequence scores the
            // same wherever in the cache it lies (perplexity packs several chunks per batch).
            auto masked = [&](int64_t c) { return *reinterpret_cast<const float*>(mrow + c * mask->nb[0]) == kNegInf; };
            if (mrow) {
                while (c_begin < c_end && masked(c_begin)) ++c_begin;
                while (c_end > c_begin && masked(c_end - 1)) --c_end;
            }
        }

        for (int64_t b = c_begin; b < c_end; b += kBlock) {
            const int64_t nb = std::min(kBlock, c_end - b);
            // Scores of this block for every head of the group; masked cells stay -inf.
            bool any = false;
            for (int64_t j = 0; j < nb; ++j) {
                const int64_t c = b + j;
                const float mv = mrow ? *reinterpret_cast<const float*>(mrow + c * mask->nb[0]) : 0.0f;
                if (mv == kNegInf) {
                    for (int64_t g = 0; g < group; ++g) scores[g * kBlock + j] = kNegInf;
                    continue;
                }
                any = true;
                const void* krow = k.element(0, hk, c);
                const float* kf = k_f32 ? static_cast<const float*>(krow) : krow_f;
                if (!k_f32) k_to_f32(krow, krow_f, d);
                for (int64_t g = 0; g < group; ++g) {
                    float score;
                    dot(d, &score, qs + g * d, kf);
                    score *= p.scale;
                    if (p.softcap > 0.0f) score = p.softcap * std::tanh(score / p.softcap);
                    scores[g * kBlock + j] = score + mv;
                }
            }
            if (!any) continue;
            // Per head: rescale what was accumulated under the old maximum.
            for (int64_t g = 0; g < group; ++g) {
                float bmax = kNegInf;
                for (int64_t j = 0; j < nb; ++j) bmax = std::max(bmax, scores[g * kBlock + j]);
                if (bmax == kNegInf) continue;
                const float m_new = std::max(ms[g], bmax);
                const float correction = std::exp(ms[g] - m_new);  // 0 on the first block (m = -inf)
                if (correction != 1.0f) {
                    for (int64_t i = 0; i < dv; ++i) accs[g * dv + i] *= correction;
                    ls[g] *= correction;
                }
                ms[g] = m_new;
            }
            // Then add this block's values, converting each V row once for the group.
            for (int64_t j = 0; j < nb; ++j) {
                const void* vrow = v.element(0, hk, b + j);
                const float* vf = v_f32 ? static_cast<const float*>(vrow) : vrow_f;
                bool converted = v_f32;
                for (int64_t g = 0; g < group; ++g) {
                    const float s = scores[g * kBlock + j];
                    if (s == kNegInf) continue;
                    if (!converted) {
                        v_to_f32(vrow, vrow_f, dv);
                        converted = true;
                    }
                    const float e = std::exp(s - ms[g]);
                    ls[g] += e;
                    float* acc = accs + g * dv;
                    for (int64_t i = 0; i < dv; ++i) acc[i] += e * vf[i];
                }
            }
        }
        for (int64_t g = 0; g < group; ++g) {
            float* out = static_cast<float*>(dst.element(0, hk * group + g, t));
            const float inv = ls[g] > 0.0f ? 1.0f / ls[g] : 0.0f;  // a fully masked row gives zeros, not NaN
            for (int64_t i = 0; i < dv; ++i) out[i] = accs[g * dv + i] * inv;
        }
    }
}

}  // namespace pocket::cpu
