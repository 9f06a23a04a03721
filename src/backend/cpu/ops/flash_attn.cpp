// Fused attention: an online softmax over blocks of kv cells, so no n_q x n_kv score matrix
// is ever stored. Work is split by (tile of queries, kv head) pairs; a tile's rows are its
// queries times the query heads that share the kv head (grouped-query attention). For each
// block of 32 cells the tile converts the K and V rows to f32 once, scores all its rows
// against them with the f32 GEMM, then per row rescales, exponentiates and accumulates with
// the kernels' attention steps (kernels/attn_math.hpp).
//
// A row's result depends only on its own cells: its blocks start at the first cell it may see,
// the GEMM gives every score exactly vec_dot's bits, and exp / accumulate are fixed
// per-element sequences. So tiling, -t, -b and -ub never change a bit.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/ops.hpp"
#include "kernels/kernels.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace pocket::cpu {

namespace {

constexpr int64_t kBlock = 32;     // cells scored before each rescale of the accumulators
constexpr int64_t kTileRows = 128; // rows (queries x heads of a group) sharing one conversion
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

int64_t tile_queries(int64_t group) { return std::max<int64_t>(kTileRows / group, 1); }

// Per-thread scratch: per row its query, accumulator, block of scores, running maximum and
// sum; then one block of converted K and V rows.
size_t scratch_floats(int64_t d, int64_t dv, int64_t rows) {
    return static_cast<size_t>(rows * (d + dv + kBlock + 2) + kBlock * (d + dv));
}

}  // namespace

size_t flash_attn_work_size(const Tensor& node, int nth) {
    const int64_t group = node.src[0]->ne[1] / node.src[1]->ne[1];
    const int64_t rows = tile_queries(group) * group;
    return per_thread_bytes(scratch_floats(node.src[0]->ne[0], node.src[2]->ne[0], rows) * sizeof(float), nth);
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
    const int64_t tq = tile_queries(group);

    float* qs = ctx.thread_scratch<float>(scratch_floats(d, dv, tq * group) * sizeof(float));  // rows x d
    float* accs = qs + tq * group * d;           // rows x dv
    float* scores = accs + tq * group * dv;      // rows x kBlock
    float* ms = scores + tq * group * kBlock;    // running maximum per row
    float* ls = ms + tq * group;                 // running sum per row
    float* k_block = ls + tq * group;            // kBlock x d, when K is not f32
    float* v_block = k_block + kBlock * d;       // kBlock x dv, when V is not f32
    const bool k_f32 = k.type == GgmlType::F32;
    const bool v_f32 = v.type == GgmlType::F32;
    const ToF32Fn k_to_f32 = to_f32_fn(k.type);
    const ToF32Fn v_to_f32 = to_f32_fn(v.type);
    const kernels::GemmFn gemm = kernels::type_kernels(GgmlType::F32)->gemm;
    const kernels::AttnKernels& step = *kernels::attn_kernels();

    auto mask_at = [&](const uint8_t* mrow, int64_t c) {
        return mrow ? *reinterpret_cast<const float*>(mrow + c * mask->nb[0]) : 0.0f;
    };
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
        if (mrow) {
            while (begin < end && mask_at(mrow, begin) == kNegInf) ++begin;
            while (end > begin && mask_at(mrow, end - 1) == kNegInf) --end;
            // A sliding window over a mask: the query sits at the last cell it may see.
            if (!p.causal && p.window > 0) begin = std::max(begin, end - p.window);
        }
        return std::pair{begin, end};
    };

    // One block's scores of row r: scaled, capped, masked (mv: its query's mask over the block,
    // -inf past the query's end); then the online softmax's rescale and the exponentials.
    // False when every cell is masked: the row takes nothing from this block.
    auto softmax_block = [&](int64_t r, const float* mv, int64_t nb) {
        float* s = scores + r * kBlock;
        float bmax = kNegInf;
        for (int64_t j = 0; j < nb; ++j) {
            float x = kNegInf;
            if (mv[j] != kNegInf) {
                x = s[j] * p.scale;
                if (p.softcap > 0.0f) x = p.softcap * std::tanh(x / p.softcap);
                x += mv[j];
            }
            s[j] = x;
            bmax = std::max(bmax, x);
        }
        if (bmax == kNegInf) return false;
        const float m_new = std::max(ms[r], bmax);
        if (m_new != ms[r]) {
            float correction = ms[r] - m_new;  // e^(-inf) = 0 on the first block
            step.exp(&correction, &correction, 1);
            float* acc = accs + r * dv;
            for (int64_t i = 0; i < dv; ++i) acc[i] *= correction;
            ls[r] *= correction;
            ms[r] = m_new;
        }
        for (int64_t j = 0; j < nb; ++j) s[j] -= m_new;
        step.exp(s, s, nb);
        return true;
    };
    // Each row's sum takes its cells in order, one add after another: alone, every add waits
    // on the one before, so four rows' chains run side by side (the same adds, the same bits).
    auto add_sums = [&](const int64_t* rows, int64_t n_rows, int64_t nb) {
        int64_t i = 0;
        for (; i + 4 <= n_rows; i += 4) {
            const float *s0 = scores + rows[i] * kBlock, *s1 = scores + rows[i + 1] * kBlock,
                        *s2 = scores + rows[i + 2] * kBlock, *s3 = scores + rows[i + 3] * kBlock;
            float l0 = ls[rows[i]], l1 = ls[rows[i + 1]], l2 = ls[rows[i + 2]], l3 = ls[rows[i + 3]];
            for (int64_t j = 0; j < nb; ++j) l0 += s0[j], l1 += s1[j], l2 += s2[j], l3 += s3[j];
            ls[rows[i]] = l0, ls[rows[i + 1]] = l1, ls[rows[i + 2]] = l2, ls[rows[i + 3]] = l3;
        }
        for (; i < n_rows; ++i)
            for (int64_t j = 0; j < nb; ++j) ls[rows[i]] += scores[rows[i] * kBlock + j];
    };

    const int64_t n_tiles = (n_q + tq - 1) / tq;
    const int64_t n_items = n_tiles * n_head_kv;
    // Items dealt round-robin: under a causal mask later tiles see more cells, so contiguous
    // shares would leave the first thread idle for half the op.
    for (int64_t w = ctx.ith; w < n_items; w += ctx.nth) {
        const int64_t tile = w / n_head_kv, hk = w % n_head_kv;
        const int64_t t0 = tile * tq, nt = std::min(n_q, t0 + tq) - t0;
        std::array<int64_t, kTileRows> begin{}, end{};
        std::array<const uint8_t*, kTileRows> mrows{};
        for (int64_t a = 0; a < nt; ++a) {
            mrows[a] = mask ? static_cast<const uint8_t*>(mask->element(0, t0 + a)) : nullptr;
            std::tie(begin[a], end[a]) = cell_range(t0 + a, mrows[a]);
            for (int64_t g = 0; g < group; ++g) {
                const int64_t r = a * group + g;
                const auto* qrow = static_cast<const uint8_t*>(q.element(0, hk * group + g, t0 + a));
                for (int64_t i = 0; i < d; ++i) qs[r * d + i] = *reinterpret_cast<const float*>(qrow + i * q.nb[0]);
                std::fill(accs + r * dv, accs + (r + 1) * dv, 0.0f);
                ms[r] = kNegInf;
                ls[r] = 0.0f;
            }
        }
        // Queries whose ranges start at the same cell share their blocks (usually all of them;
        // packed sequences give one set per sequence).
        std::array<bool, kTileRows> done{};
        for (int64_t a0 = 0; a0 < nt; ++a0) {
            if (done[a0]) continue;
            const int64_t cb = begin[a0];
            int64_t ce = cb;
            for (int64_t a = a0; a < nt; ++a)
                if (begin[a] == cb) ce = std::max(ce, end[a]);
            for (int64_t b = cb; b < ce; b += kBlock) {
                const int64_t nb = std::min(kBlock, ce - b);
                // The queries of this set that still see cells here, as a span of rows.
                int64_t lo = nt, hi = -1;
                for (int64_t a = a0; a < nt; ++a)
                    if (begin[a] == cb && end[a] > b) lo = std::min(lo, a), hi = a;
                if (hi < 0) break;
                const float* kb = k_block;
                size_t k_stride = static_cast<size_t>(d) * sizeof(float);
                if (k_f32) kb = static_cast<const float*>(k.element(0, hk, b)), k_stride = k.nb[2];
                else for (int64_t j = 0; j < nb; ++j) k_to_f32(k.element(0, hk, b + j), k_block + j * d, d);
                const float* vb = v_block;
                int64_t v_stride = dv;
                if (v_f32) vb = static_cast<const float*>(v.element(0, hk, b)), v_stride = static_cast<int64_t>(v.nb[2] / sizeof(float));
                else for (int64_t j = 0; j < nb; ++j) v_to_f32(v.element(0, hk, b + j), v_block + j * dv, dv);
                gemm(d, kb, k_stride, nb, qs + lo * group * d, static_cast<size_t>(d) * sizeof(float),
                     (hi + 1 - lo) * group, scores + lo * group * kBlock, kBlock);
                std::array<int64_t, kTileRows> live;  // rows that see a cell of this block
                int64_t n_live = 0;
                for (int64_t a = lo; a <= hi; ++a) {
                    if (begin[a] != cb || end[a] <= b) continue;
                    std::array<float, kBlock> mv;  // the query's mask here, shared by its group's rows
                    for (int64_t j = 0; j < nb; ++j) mv[j] = b + j < end[a] ? mask_at(mrows[a], b + j) : kNegInf;
                    for (int64_t g = 0; g < group; ++g)
                        if (softmax_block(a * group + g, mv.data(), nb)) live[n_live++] = a * group + g;
                }
                add_sums(live.data(), n_live, nb);
                for (int64_t i = 0; i < n_live; ++i)
                    step.accumulate(dv, accs + live[i] * dv, scores + live[i] * kBlock, nb, vb, v_stride);
            }
            for (int64_t a = a0; a < nt; ++a)
                if (begin[a] == cb) done[a] = true;
        }
        for (int64_t a = 0; a < nt; ++a)
            for (int64_t g = 0; g < group; ++g) {
                const int64_t r = a * group + g;
                float* out = static_cast<float*>(dst.element(0, hk * group + g, t0 + a));
                const float inv = ls[r] > 0.0f ? 1.0f / ls[r] : 0.0f;  // a fully masked row gives zeros, not NaN
                for (int64_t i = 0; i < dv; ++i) out[i] = accs[r * dv + i] * inv;
            }
    }
}

}  // namespace pocket::cpu
