// Fused attention: an online softmax over blocks of kv cells, so no n_q x n_kv score matrix
// is ever stored. Work is split by (tile of queries, kv head) pairs; the query heads that
// share a kv head (grouped-query attention) are processed together, and the K and V rows a
// tile reads are converted to f32 once for the whole tile (a prompt's queries all read the
// same rows), not once per query. Every output row is computed by one thread in a fixed cell
// order, the same whatever the tiling, so results do not depend on -t.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/ops.hpp"
#include "kernels/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace pocket::cpu {

namespace {

constexpr int64_t kBlock = 32;       // cells scored before each rescale of the accumulators
constexpr int64_t kTile = 16;        // queries sharing one conversion of the K and V rows
constexpr int64_t kMaxCached = 4096; // cells a tile converts at once; a longer range goes row by row

// Cells whose converted K and V rows a thread keeps (0 when both are f32 already).
int64_t cached_cells(const Tensor& node) {
    if (node.src[1]->type == GgmlType::F32 && node.src[2]->type == GgmlType::F32) return 0;
    return std::min(node.src[1]->ne[2], kMaxCached);
}

// Per-thread scratch: one converted K row and V row, then per head of the group its query,
// accumulator, block of scores, running maximum and running sum, then the tile's rows.
size_t scratch_floats(int64_t d, int64_t dv, int64_t group, int64_t cached) {
    return static_cast<size_t>(d + dv + group * (d + dv + kBlock + 2) + cached * (d + dv));
}

}  // namespace

size_t flash_attn_work_size(const Tensor& node, int nth) {
    const int64_t group = node.src[0]->ne[1] / node.src[1]->ne[1];
    return per_thread_bytes(scratch_floats(node.src[0]->ne[0], node.src[2]->ne[0], group, cached_cells(node)) * sizeof(float), nth);
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

    const int64_t n_cached = cached_cells(dst);
    float* krow_f = ctx.thread_scratch<float>(scratch_floats(d, dv, group, n_cached) * sizeof(float));
    float* vrow_f = krow_f + d;
    float* qs = vrow_f + dv;              // group x d
    float* accs = qs + group * d;         // group x dv
    float* scores = accs + group * dv;    // group x kBlock
    float* ms = scores + group * kBlock;  // running maximum per head
    float* ls = ms + group;               // running sum per head
    float* k_cache = ls + group;          // n_cached x d: the tile's K rows in f32
    float* v_cache = k_cache + n_cached * d;
    const bool k_f32 = k.type == GgmlType::F32;
    const bool v_f32 = v.type == GgmlType::F32;
    const ToF32Fn k_to_f32 = to_f32_fn(k.type);
    const ToF32Fn v_to_f32 = to_f32_fn(v.type);
    // Scores in f32 with the kernels' f32 dot (fixed summation order for a given n).
    const kernels::VecDotFn dot = kernels::type_kernels(GgmlType::F32)->vec_dot;

    // The cells query t attends to: [begin, end), masked cells at either end left out.
    auto cell_range = [&](int64_t t, const uint8_t* mrow) {
        const int64_t pos = n_kv - n_q + t;
        int64_t begin = 0, end = n_kv;
        if (p.causal) {
            end = std::clamp<int64_t>(pos + 1, 0, n_kv);
            if (p.window > 0) begin = std::max<int64_t>(0, pos - p.window + 1);
        }
        // Blocks start at the first cell the mask lets through, so a sequence scores the
        // same wherever in the cache it lies (perplexity packs several chunks per batch).
        auto masked = [&](int64_t c) { return *reinterpret_cast<const float*>(mrow + c * mask->nb[0]) == kNegInf; };
        if (mrow) {
            while (begin < end && masked(begin)) ++begin;
            while (end > begin && masked(end - 1)) --end;
            // A sliding window over a mask: the query sits at the last cell it may see.
            if (!p.causal && p.window > 0) begin = std::max(begin, end - p.window);
        }
        return std::pair{begin, end};
    };
    const int64_t n_tiles = (n_q + kTile - 1) / kTile;
    const auto [w0, w1] = ctx.range(n_tiles * n_head_kv);
    for (int64_t w = w0; w < w1; ++w) {
        const int64_t tile = w / n_head_kv, hk = w % n_head_kv;
        const int64_t t0 = tile * kTile, t1 = std::min(n_q, t0 + kTile);
        // The tile's rows, converted once: the union of its queries' cell ranges.
        int64_t u0 = n_kv, u1 = 0;
        for (int64_t t = t0; t < t1; ++t) {
            const auto [cb, ce] = cell_range(t, mask ? static_cast<const uint8_t*>(mask->element(0, t)) : nullptr);
            if (cb < ce) u0 = std::min(u0, cb), u1 = std::max(u1, ce);
        }
        const bool cached = n_cached > 0 && u1 > u0 && u1 - u0 <= n_cached;
        if (cached)
            for (int64_t c = u0; c < u1; ++c) {
                if (k_f32) std::copy_n(static_cast<const float*>(k.element(0, hk, c)), d, k_cache + (c - u0) * d);
                else k_to_f32(k.element(0, hk, c), k_cache + (c - u0) * d, d);
                if (v_f32) std::copy_n(static_cast<const float*>(v.element(0, hk, c)), dv, v_cache + (c - u0) * dv);
                else v_to_f32(v.element(0, hk, c), v_cache + (c - u0) * dv, dv);
            }
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t g = 0; g < group; ++g) {
            const auto* qrow = static_cast<const uint8_t*>(q.element(0, hk * group + g, t));
            for (int64_t i = 0; i < d; ++i) qs[g * d + i] = *reinterpret_cast<const float*>(qrow + i * q.nb[0]);
            std::fill(accs + g * dv, accs + (g + 1) * dv, 0.0f);
            ms[g] = kNegInf;
            ls[g] = 0.0f;
        }
        const auto* mrow = mask ? static_cast<const uint8_t*>(mask->element(0, t)) : nullptr;
        const auto [c_begin, c_end] = cell_range(t, mrow);

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
                const float* kf = cached ? k_cache + (c - u0) * d : k_f32 ? static_cast<const float*>(krow) : krow_f;
                if (!cached && !k_f32) k_to_f32(krow, krow_f, d);
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
                const float* vf = cached ? v_cache + (b + j - u0) * dv : v_f32 ? static_cast<const float*>(vrow) : vrow_f;
                bool converted = cached || v_f32;
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
}

}  // namespace pocket::cpu
