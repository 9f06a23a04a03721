// mul_mat_id: each token's rows multiplied by the experts the router chose for it.
// The (token, slot) rows are grouped by expert, in token order, so that a prompt runs each
// expert's GEMM once over all of its rows, with mul_mat's kernels:
//   1. the activation rows are converted once to the weight's vec_dot_type (threads split rows);
//   2. one thread lists the rows of each expert; every thread then gathers its share of them
//      into one contiguous block per expert;
//   3. work items are (expert, tile of 16 weight rows); each is one gemm (vec_dot for a single
//      row, as mul_mat) into the thread's scratch, scattered to the output.
// Every output element is one kernel call over the same bytes as mul_mat(expert, x) would
// make, so the result is bitwise that of mul_mat, for any thread count and batch split.
#include "backend/cpu/ops.hpp"
#include "kernels/kernels.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace pocket::cpu {

namespace {

constexpr int64_t kTile = 16;

struct Layout {
    size_t a_row;                             // bytes of one converted activation row
    size_t converted, gathered, lists, temp;  // offsets in the scratch
    size_t temp_bytes;                        // per thread
    size_t total;
};

Layout layout_of(const Tensor& node, int nth) {
    const Tensor& w = *node.src[0];
    const Tensor& x = *node.src[1];
    const Tensor& ids = *node.src[2];
    const auto& ti = ggml_type_info(kernels::type_kernels(w.type)->vec_dot_type);
    const int64_t n_rows = ids.ne[0] * ids.ne[1];  // (slot, token) pairs
    Layout l{};
    l.a_row = static_cast<size_t>(x.ne[0] / ti.block_size) * ti.block_bytes;
    l.converted = 0;
    l.gathered = round_up(l.a_row * static_cast<size_t>(x.nrows()), kScratchAlign);
    l.lists = l.gathered + round_up(l.a_row * static_cast<size_t>(n_rows), kScratchAlign);
    // per expert: first list entry (n_expert + 1 offsets), then the list of rows
    l.temp = l.lists + round_up(sizeof(int64_t) * static_cast<size_t>(w.ne[2] + 1 + n_rows), kScratchAlign);
    l.temp_bytes = sizeof(float) * static_cast<size_t>(kTile * n_rows);  // one expert may have every row (ids may repeat)
    l.total = l.temp + per_thread_bytes(l.temp_bytes, nth);
    return l;
}

}  // namespace

size_t mul_mat_id_work_size(const Tensor& node, int nth) { return layout_of(node, nth).total; }

void op_mul_mat_id(const OpContext& ctx, Tensor& dst) {
    const Tensor& w = *dst.src[0];
    const Tensor& x = *dst.src[1];
    const Tensor& ids = *dst.src[2];
    const kernels::TypeKernels& k = *kernels::type_kernels(w.type);
    const int64_t n = w.ne[0], n_expert = w.ne[2], n_used = ids.ne[0], n_tokens = ids.ne[1];
    const Layout l = layout_of(dst, ctx.nth);
    uint8_t* converted = ctx.work + l.converted;
    uint8_t* gathered = ctx.work + l.gathered;
    int64_t* first = reinterpret_cast<int64_t*>(ctx.work + l.lists);  // [n_expert + 1]
    int64_t* rows = first + n_expert + 1;                             // (token * n_used + slot), grouped by expert

    // 1. Activations in the weight's dot type.
    {
        const auto [r0, r1] = ctx.range(x.nrows());
        for (int64_t r = r0; r < r1; ++r)
            kernels::convert_activation_row(k.vec_dot_type, reinterpret_cast<const float*>(row_ptr(x, row_index(x, r))),
                                            converted + static_cast<size_t>(r) * l.a_row, n);
    }
    // 2. The rows of each expert, in token order (a counting sort), then gathered.
    auto expert_of = [&](int64_t row) { return *static_cast<const int32_t*>(ids.element(row % n_used, row / n_used)); };
    if (ctx.ith == 0) {
        std::fill(first, first + n_expert + 1, 0);
        for (int64_t r = 0; r < n_used * n_tokens; ++r) {
            const int32_t e = expert_of(r);
            if (e < 0 || e >= n_expert) {
                ctx.fail(fmt::format("mul_mat_id: expert {} out of range [0, {}) for {}", e, n_expert, tensor_desc(w)));
                continue;
            }
            ++first[e + 1];
        }
        for (int64_t e = 0; e < n_expert; ++e) first[e + 1] += first[e];
        std::vector<int64_t> next(first, first + n_expert);
        for (int64_t r = 0; r < n_used * n_tokens; ++r)
            if (const int32_t e = expert_of(r); e >= 0 && e < n_expert) rows[next[e]++] = r;
    }
    ctx.barrier();
    const int64_t n_listed = first[n_expert];
    {
        const auto [g0, g1] = ctx.range(n_listed);
        for (int64_t g = g0; g < g1; ++g) {
            const int64_t r = rows[g], slot = r % n_used, token = r / n_used;
            const int64_t x_row = token * x.ne[1] + (x.ne[1] == 1 ? 0 : slot);
            std::copy_n(converted + static_cast<size_t>(x_row) * l.a_row, l.a_row, gathered + static_cast<size_t>(g) * l.a_row);
        }
    }
    ctx.barrier();

    // 3. (expert, tile) items in expert order, split across threads.
    const int64_t tiles = (w.ne[1] + kTile - 1) / kTile;
    int64_t n_items = 0;
    for (int64_t e = 0; e < n_expert; ++e) n_items += first[e + 1] > first[e] ? tiles : 0;
    float* temp = ctx.thread_scratch<float>(l.temp_bytes, l.temp);
    const auto [w0, w1] = ctx.range(n_items);
    int64_t item = 0;
    for (int64_t e = 0; e < n_expert && item < w1; ++e) {
        const int64_t m = first[e + 1] - first[e];
        if (m == 0) continue;
        for (int64_t t = 0; t < tiles; ++t, ++item) {
            if (item < w0 || item >= w1) continue;
            const int64_t i0 = t * kTile, i1 = std::min(w.ne[1], i0 + kTile);
            const uint8_t* wp = static_cast<const uint8_t*>(w.data) + e * w.nb[2] + i0 * w.nb[1];
            const uint8_t* ap = gathered + static_cast<size_t>(first[e]) * l.a_row;
            if (m == 1) {
                for (int64_t i = 0; i < i1 - i0; ++i) k.vec_dot(n, temp + i, wp + i * w.nb[1], ap);
            } else {
                k.gemm(n, wp, w.nb[1], i1 - i0, ap, l.a_row, m, temp, kTile);
            }
            for (int64_t j = 0; j < m; ++j) {
                const int64_t r = rows[first[e] + j];
                std::copy_n(temp + j * kTile, i1 - i0, static_cast<float*>(dst.element(i0, r % n_used, r / n_used)));
            }
        }
    }
}

}  // namespace pocket::cpu
