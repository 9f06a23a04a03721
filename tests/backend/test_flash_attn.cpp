// The fused attention against naive attention, softmax(q k^T * scale + mask) v, computed in
// double from the same (dequantized) K and V: prefill and decode, grouped-query heads,
// causal with and without a sliding window, an explicit mask with and without one, soft-capping,
// f32/f16/q8_0 caches.
#include "op_test_util.hpp"

#include "model/blocks.hpp"

#include <algorithm>
#include <limits>

namespace pocket::test {
namespace {

using GT = GgmlType;

struct AttnCase {
    const char* name;
    int64_t d, dv, n_head, n_head_kv, n_q, n_kv;
    GT kv_type;
    AttnParams p;
    bool with_mask;
};

// fused: Graph::flash_attn; otherwise the separate ops of -fa off (model/blocks.hpp).
void run_case(const AttnCase& c, bool fused) {
    SCOPED_TRACE(std::string(c.name) + (fused ? "" : ", separate ops"));
    CpuRunner r(3);
    const int64_t n_ctx = c.n_kv + 5;  // the views cover only part of the cache
    Tensor kc = make_tensor(c.kv_type, {c.d * c.n_head_kv, n_ctx, 1, 1}, nullptr, "k_cache");
    Tensor vc = make_tensor(c.kv_type, {c.dv * c.n_head_kv, n_ctx, 1, 1}, nullptr, "v_cache");
    auto buf = r.backend->alloc_buffer(kc.nbytes() + vc.nbytes() + 2 * Buffer::kAlign);
    buf->place(kc);
    buf->place(vc);
    // Random keys/values written through the cache's own type; the reference reads them back.
    std::vector<float> kf(static_cast<size_t>(kc.ne[0] * n_ctx)), vf(static_cast<size_t>(vc.ne[0] * n_ctx));
    auto kr = random_floats(kf.size(), 21, -2.0f, 2.0f), vr = random_floats(vf.size(), 22);
    for (int64_t j = 0; j < n_ctx; ++j) {
        auto* krow = static_cast<uint8_t*>(kc.data) + j * kc.nb[1];
        auto* vrow = static_cast<uint8_t*>(vc.data) + j * vc.nb[1];
        store_row(c.kv_type, &kr[j * kc.ne[0]], krow, kc.ne[0]);
        store_row(c.kv_type, &vr[j * vc.ne[0]], vrow, vc.ne[0]);
        load_row(c.kv_type, krow, &kf[j * kc.ne[0]], kc.ne[0]);
        load_row(c.kv_type, vrow, &vf[j * vc.ne[0]], vc.ne[0]);
    }

    Graph g;
    // q as the model has it after rope: [d, n_head, n_q], here a permuted (strided) view.
    Tensor* q = g.permute(g.input("q", GT::F32, {c.d, c.n_q, c.n_head, 1}), 0, 2, 1, 3);
    const size_t krow = kc.row_bytes() / static_cast<size_t>(c.n_head_kv);
    const size_t vrow = vc.row_bytes() / static_cast<size_t>(c.n_head_kv);
    Tensor* k = g.view_3d(&kc, c.d, c.n_head_kv, c.n_kv, krow, kc.nb[1], 0);
    Tensor* v = g.view_3d(&vc, c.dv, c.n_head_kv, c.n_kv, vrow, vc.nb[1], 0);
    Tensor* mask = c.with_mask ? g.input("mask", GT::F32, {c.n_kv, c.n_q, 1, 1}) : nullptr;
    Tensor* out = fused ? g.flash_attn(q, k, v, mask, c.p) : attention_ops(g, q, k, v, mask, c.p);
    g.mark_output(out);
    r.sched.allocate(g);
    fill_random(q->view_src, 23);
    std::vector<float> m(static_cast<size_t>(c.n_kv * c.n_q), 0.0f);
    if (mask) {
        // A causal mask with some extra holes and a soft bias.
        auto bias = random_floats(m.size(), 24, -1.0f, 0.0f);
        for (int64_t t = 0; t < c.n_q; ++t)
            for (int64_t j = 0; j < c.n_kv; ++j) {
                const bool visible = j <= c.n_kv - c.n_q + t && (j % 7 != 3 || j == 0);
                m[t * c.n_kv + j] = visible ? bias[t * c.n_kv + j] : -std::numeric_limits<float>::infinity();
            }
        tensor_set(*mask, m.data(), m.size() * sizeof(float));
    }
    r.sched.compute(g);

    // The separate ops multiply an f16 cache with q and the probabilities rounded to f16
    // (mul_mat's activations take the weight's type, as in ggml): 2^-11 relative each, so
    // about 1e-3 of the largest |v| (1) absolute. A cell wrongly in or out of a window of
    // 16 moves an output by some 1/16 of a value.
    auto tolerance = [&](double want) { return fused || c.kv_type == GT::F32 ? 1e-5 * std::fabs(want) + 1e-6 : 3e-3; };
    const int64_t group = c.n_head / c.n_head_kv;
    for (int64_t t = 0; t < c.n_q; ++t) {
        for (int64_t h = 0; h < c.n_head; ++h) {
            const int64_t hk = h / group;
            const int64_t pos = c.n_kv - c.n_q + t;
            // With a mask, a window ends at the last cell the query's row lets through.
            int64_t last = pos;
            if (mask)
                while (last > 0 && std::isinf(m[t * c.n_kv + last])) --last;
            std::vector<double> s(static_cast<size_t>(c.n_kv));
            double mx = -INFINITY;
            for (int64_t j = 0; j < c.n_kv; ++j) {
                double dot = 0;
                for (int64_t i = 0; i < c.d; ++i) dot += double(get_f32(*q, i, h, t)) * kf[j * kc.ne[0] + hk * c.d + i];
                double x = dot * c.p.scale;
                if (c.p.softcap > 0) x = c.p.softcap * std::tanh(x / c.p.softcap);
                if (mask) x += m[t * c.n_kv + j];
                if (c.p.causal && (j > pos || (c.p.window > 0 && j <= pos - c.p.window))) x = -INFINITY;
                if (!c.p.causal && mask && c.p.window > 0 && j <= last - c.p.window) x = -INFINITY;
                s[j] = x;
                mx = std::max(mx, x);
            }
            double sum = 0;
            for (auto& x : s) sum += (x = std::exp(x - mx));
            for (int64_t i = 0; i < c.dv; ++i) {
                double want = 0;
                for (int64_t j = 0; j < c.n_kv; ++j) want += s[j] / sum * vf[j * vc.ne[0] + hk * c.dv + i];
                const double got = get_f32(*out, i, h, t);
                const double tol = tolerance(want);
                ASSERT_NEAR(got, want, tol) << "t=" << t << " h=" << h << " i=" << i;
            }
        }
    }
}

TEST(FlashAttn, MatchesNaiveAttention) {
    const float s64 = 0.125f, s40 = 1.0f / std::sqrt(40.0f);
    const AttnCase cases[] = {
        {"prefill causal f32", 64, 64, 4, 4, 7, 7, GT::F32, {s64, 0, 1, 0}, false},
        {"prefill causal gqa f32, several blocks", 40, 40, 6, 2, 70, 70, GT::F32, {s40, 0, 1, 0}, false},
        {"decode after 69 cells f32", 64, 64, 4, 1, 1, 70, GT::F32, {s64, 0, 1, 0}, false},
        {"continued prefill, sliding window", 64, 64, 2, 2, 5, 50, GT::F32, {s64, 0, 1, 16}, false},
        {"explicit mask, dv != d", 64, 32, 4, 2, 9, 45, GT::F32, {s64, 0, 0, 0}, true},
        {"softcap", 64, 64, 2, 1, 4, 40, GT::F32, {s64, 3.0f, 1, 0}, false},
        {"f16 cache with mask", 64, 64, 4, 2, 6, 65, GT::F16, {s64, 0, 0, 0}, true},
        {"mask with a sliding window and softcap (gemma2)", 48, 48, 4, 2, 20, 70, GT::F16, {0.15f, 5.0f, 0, 16}, true},
        {"mask with a window wider than the cells", 64, 64, 2, 1, 3, 33, GT::F32, {s64, 0, 0, 40}, true},
        {"q8_0 cache causal gqa", 64, 64, 8, 2, 3, 33, GT::Q8_0, {s64, 0, 1, 0}, false},
    };
    for (const auto& c : cases) run_case(c, true);
    for (const auto& c : cases)
        if (c.kv_type != GT::Q8_0) run_case(c, false);  // a block type cannot be transposed: -fa off needs a float V cache
}

}  // namespace
}  // namespace pocket::test
