// Each CPU op against a naive double-precision reference, on odd sizes and non-contiguous
// views (permuted, transposed, offset), with 3 threads so rows split unevenly.
#include "op_test_util.hpp"

#include <algorithm>
#include <numbers>

namespace pocket::test {
namespace {

using GT = GgmlType;

// A permuted view [ne1, ne0, ne2, ne3] of a fresh input [ne0, ne1, ne2, ne3]: non-contiguous.
Tensor* transposed_input(Graph& g, const char* name, std::array<int64_t, 4> ne) {
    return g.transpose(g.input(name, GT::F32, {ne[1], ne[0], ne[2], ne[3]}));
}

void run(CpuRunner& r, Graph& g, std::initializer_list<Tensor*> inputs, uint32_t seed = 1) {
    r.sched.allocate(g);
    for (Tensor* t : inputs) fill_random(t, seed++);
    r.sched.compute(g);
}

TEST(CpuOps, AddMulBroadcastOverStridedOperands) {
    CpuRunner r(3);
    Graph g;
    Tensor* a = transposed_input(g, "a", {7, 5, 3, 2});
    Tensor* b = g.input("b", GT::F32, {7, 1, 3, 1});
    Tensor* sum = g.add(a, b);
    Tensor* prod = g.mul(a, b);
    Tensor* bv = g.view(b, {7, 1, 1, 1}, {b->nb[1], b->nb[1], b->nb[1]}, 2 * b->nb[2]);  // offset view: plane 2
    Tensor* prod2 = g.mul(a, bv);
    g.mark_output(sum);
    g.mark_output(prod);
    g.mark_output(prod2);
    run(r, g, {a->view_src, b});
    expect_close(*sum, [&](auto i0, auto i1, auto i2, auto i3) {
        return double(get_f32(*a, i0, i1, i2, i3)) + get_f32(*b, i0, 0, i2 % 3, 0);
    });
    expect_close(*prod, [&](auto i0, auto i1, auto i2, auto i3) {
        return double(get_f32(*a, i0, i1, i2, i3)) * get_f32(*b, i0, 0, i2 % 3, 0);
    });
    expect_close(*prod2, [&](auto i0, auto i1, auto i2, auto i3) {
        return double(get_f32(*a, i0, i1, i2, i3)) * get_f32(*b, i0, 0, 2, 0);
    });
}

TEST(CpuOps, UnaryAndGatedActivations) {
    CpuRunner r(3);
    Graph g;
    Tensor* a = transposed_input(g, "a", {13, 9, 2, 1});
    Tensor* u = g.input("u", GT::F32, {13, 9, 2, 1});
    Tensor* sc = g.scale(a, 0.37f);
    Tensor* si = g.silu(a);
    Tensor* ge = g.gelu(a);
    Tensor* sw = g.swiglu(a, u);
    Tensor* gg = g.geglu(a, u);
    Tensor* th = g.tanh(a);
    for (Tensor* t : {sc, si, ge, sw, gg, th}) g.mark_output(t);
    r.sched.allocate(g);
    fill_random(a->view_src, 3, -6.0f, 6.0f);
    fill_random(u, 4);
    r.sched.compute(g);
    auto silu = [](double x) { return x / (1.0 + std::exp(-x)); };
    auto gelu = [](double x) {
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
    };
    expect_close(*sc, [&](auto i0, auto i1, auto i2, auto i3) { return get_f32(*a, i0, i1, i2, i3) * 0.37; });
    expect_close(*si, [&](auto i0, auto i1, auto i2, auto i3) { return silu(get_f32(*a, i0, i1, i2, i3)); });
    expect_close(*ge, [&](auto i0, auto i1, auto i2, auto i3) { return gelu(get_f32(*a, i0, i1, i2, i3)); });
    expect_close(*th, [&](auto i0, auto i1, auto i2, auto i3) { return std::tanh(get_f32(*a, i0, i1, i2, i3)); });
    expect_close(*sw, [&](auto i0, auto i1, auto i2, auto i3) {
        return silu(get_f32(*a, i0, i1, i2, i3)) * get_f32(*u, i0, i1, i2, i3);
    });
    expect_close(*gg, [&](auto i0, auto i1, auto i2, auto i3) {
        return gelu(get_f32(*a, i0, i1, i2, i3)) * get_f32(*u, i0, i1, i2, i3);
    });
}

TEST(CpuOps, RmsNormAndNorm) {
    CpuRunner r(3);
    Graph g;
    Tensor* a = transposed_input(g, "a", {67, 5, 3, 1});
    const float eps = 1e-5f;
    Tensor* rn = g.rms_norm(a, eps);
    Tensor* n = g.norm(a, eps);
    g.mark_output(rn);
    g.mark_output(n);
    r.sched.allocate(g);
    fill_random(a->view_src, 5, -3.0f, 4.0f);
    r.sched.compute(g);
    auto stats = [&](int64_t i1, int64_t i2) {
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < a->ne[0]; ++i) {
            s += get_f32(*a, i, i1, i2);
            s2 += double(get_f32(*a, i, i1, i2)) * get_f32(*a, i, i1, i2);
        }
        const double mean = s / double(a->ne[0]);
        return std::pair{mean, s2 / double(a->ne[0])};
    };
    expect_close(*rn, [&](auto i0, auto i1, auto i2, auto) {
        return get_f32(*a, i0, i1, i2) / std::sqrt(stats(i1, i2).second + eps);
    });
    expect_close(*n, [&](auto i0, auto i1, auto i2, auto) {
        auto [mean, ms] = stats(i1, i2);
        return (get_f32(*a, i0, i1, i2) - mean) / std::sqrt(ms - mean * mean + eps);
    }, 1e-4, 1e-5);
}

// Reference softmax of one row with the SoftMaxParams rules.
std::vector<double> ref_softmax(const Tensor& a, const Tensor* mask, const SoftMaxParams& p, int64_t i1, int64_t i2) {
    const int64_t n = a.ne[0];
    std::vector<double> v(static_cast<size_t>(n));
    int64_t pos = n - a.ne[1] + i1;
    const bool mask_window = !p.causal && p.window > 0 && mask;  // the window ends at the mask's last open column
    if (mask_window)
        for (pos = n - 1; pos > 0 && std::isinf(get_f32(*mask, pos, i1));) --pos;
    double mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
        double x = double(get_f32(a, i, i1, i2)) * p.scale;
        if (p.softcap > 0) x = p.softcap * std::tanh(x / p.softcap);
        if (mask) x += get_f32(*mask, i, i1);
        if (p.causal && (i > pos || (p.window > 0 && i <= pos - p.window))) x = -INFINITY;
        if (mask_window && i <= pos - p.window) x = -INFINITY;
        v[i] = x;
        mx = std::max(mx, x);
    }
    double sum = 0;
    for (auto& x : v) sum += (x = std::exp(x - mx));
    for (auto& x : v) x /= sum;
    return v;
}

TEST(CpuOps, SoftMaxWithMaskCausalWindowAndSoftcap) {
    const SoftMaxParams cases[] = {
        {1.0f, 0.0f, 0, 0}, {0.125f, 0.0f, 1, 0}, {0.5f, 0.0f, 1, 4}, {0.3f, 5.0f, 0, 0}, {0.5f, 0.0f, 0, 6}};
    for (const auto& p : cases) {
        for (bool with_mask : {false, true}) {
            CpuRunner r(3);
            Graph g;
            Tensor* a = transposed_input(g, "a", {19, 7, 3, 1});
            Tensor* mask = with_mask ? g.input("mask", GT::F32, {19, 8, 1, 1}) : nullptr;
            Tensor* out = g.soft_max(a, mask, p);
            g.mark_output(out);
            r.sched.allocate(g);
            fill_random(a->view_src, 7, -8.0f, 8.0f);
            if (mask) {
                fill_random(mask, 8, -2.0f, 0.0f);
                for (int64_t t = 0; t < 8; ++t)  // closed columns at the end: a window ends before them
                    for (int64_t i = 19 - t % 4; i < 19; ++i) static_cast<float*>(mask->data)[t * 19 + i] = -INFINITY;
            }
            r.sched.compute(g);
            expect_close(*out, [&](auto i0, auto i1, auto i2, auto) { return ref_softmax(*a, mask, p, i1, i2)[i0]; });
        }
    }
}

TEST(CpuOps, GetRowsF32F16Q8_0) {
    for (GT type : {GT::F32, GT::F16, GT::Q8_0}) {
        CpuRunner r(3);
        const int64_t n_embd = 64, n_vocab = 11;
        auto values = random_floats(n_embd * n_vocab, 9);
        Tensor w = make_tensor(type, {n_embd, n_vocab, 1, 1}, nullptr, "tok_embd");
        auto buf = r.backend->alloc_buffer(w.nbytes());
        buf->place(w);
        for (int64_t row = 0; row < n_vocab; ++row)
            store_row(type, &values[row * n_embd], static_cast<uint8_t*>(w.data) + row * w.nb[1], n_embd);
        Graph g;
        Tensor* ids = g.input("ids", GT::I32, {5, 1, 1, 1});
        Tensor* out = g.get_rows(&w, ids);
        g.mark_output(out);
        r.sched.allocate(g);
        const int32_t id_values[5] = {3, 0, 10, 3, 7};
        tensor_set(*ids, id_values, sizeof(id_values));
        r.sched.compute(g);
        // f16 rounds to 11 bits, q8_0 to a 255-level grid of each 32-block's max.
        const double tol = type == GT::F32 ? 0.0 : type == GT::F16 ? 1e-3 : 1.0 / 127 / 2 + 1e-3;
        expect_close(*out, [&](auto i0, auto i1, auto, auto) { return values[id_values[i1] * n_embd + i0]; }, 0.0,
                     tol);
    }
}

// mul_mat in f32 and f16 weights; one activation row (vec_dot) and several (gemm); strided
// activations; weights broadcast over dim 2.
TEST(CpuOps, MulMat) {
    for (GT wtype : {GT::F32, GT::F16}) {
        for (int64_t m : {1, 6}) {
            CpuRunner r(3);
            const int64_t k = 67, n = 37;  // 3 threads take tiles of 16 rows: 16 + 16 + 5
            Tensor w = make_tensor(wtype, {k, n, 2, 1});
            auto buf = r.backend->alloc_buffer(w.nbytes());
            buf->place(w);
            auto wv = random_floats(static_cast<size_t>(k * n * 2), 11);
            for (int64_t row = 0; row < n * 2; ++row)
                store_row(wtype, &wv[row * k], static_cast<uint8_t*>(w.data) + row * w.nb[1], k);
            Graph g;
            Tensor* x = transposed_input(g, "x", {k, m, 4, 1});  // [k, m, 4]: x.ne2 = 2 * w.ne2
            Tensor* out = g.mul_mat(&w, x);
            g.mark_output(out);
            r.sched.allocate(g);
            fill_random(x->view_src, 12);
            r.sched.compute(g);
            auto wval = [&](int64_t i, int64_t row, int64_t plane) -> double {
                if (wtype == GT::F32) return get_f32(w, i, row, plane);
                float f;
                load_row(GT::F16, w.element(i, row, plane), &f, 1);
                return f;
            };
            // f16 weights pair with f16 activations (as in ggml): x is rounded to f16 first.
            auto xval = [&](int64_t i, int64_t j, int64_t p) {
                const float f = get_f32(*x, i, j, p);
                return wtype == GT::F16 ? double(round_f16(f)) : double(f);
            };
            expect_close(*out, [&](auto i0, auto i1, auto i2, auto) {
                double s = 0;
                for (int64_t i = 0; i < k; ++i) s += wval(i, i0, i2 / 2) * xval(i, i1, i2);
                return s;
            }, 1e-5, 1e-4);
        }
    }
}

double ref_theta(const RopeParams& p, int64_t pair, double pos, const float* ff) {
    double theta = pos * std::pow(double(p.freq_base), -2.0 * double(pair) / p.n_rot);
    if (ff) theta /= ff[pair];
    return theta;
}

TEST(CpuOps, RopeNormNeoxWithFreqFactors) {
    for (RopeMode mode : {RopeMode::norm, RopeMode::neox}) {
        for (bool with_ff : {false, true}) {
            CpuRunner r(3);
            const int64_t hd = 24, nh = 3, nt = 5;
            RopeParams p;
            p.mode = mode;
            p.n_rot = 16;  // the last 8 dims pass through
            p.freq_base = 500000.0f;
            Graph g;
            Tensor* a = g.permute(g.input("a", GT::F32, {hd, nt, nh, 1}), 0, 2, 1, 3);  // [hd, nh, nt], strided
            Tensor* pos = g.input("pos", GT::I32, {nt, 1, 1, 1});
            Tensor* ff = with_ff ? g.input("ff", GT::F32, {p.n_rot / 2, 1, 1, 1}) : nullptr;
            Tensor* out = g.rope(a, pos, p, ff);
            g.mark_output(out);
            r.sched.allocate(g);
            fill_random(a->view_src, 13);
            const int32_t positions[nt] = {0, 1, 7, 100, 4095};
            tensor_set(*pos, positions, sizeof(positions));
            std::vector<float> factors(p.n_rot / 2);
            for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + float(i) * 0.5f;
            if (ff) tensor_set(*ff, factors.data(), factors.size() * 4);
            r.sched.compute(g);
            expect_close(*out, [&](auto i0, auto i1, auto i2, auto) -> double {
                if (i0 >= p.n_rot) return get_f32(*a, i0, i1, i2);
                const int64_t half = p.n_rot / 2;
                const int64_t pair = mode == RopeMode::neox ? i0 % half : i0 / 2;
                const int64_t ia = mode == RopeMode::neox ? pair : 2 * pair;
                const int64_t ib = mode == RopeMode::neox ? pair + half : 2 * pair + 1;
                const double th = ref_theta(p, pair, positions[i2], ff ? factors.data() : nullptr);
                const double x0 = get_f32(*a, ia, i1, i2), x1 = get_f32(*a, ib, i1, i2);
                return i0 == ia ? x0 * std::cos(th) - x1 * std::sin(th) : x0 * std::sin(th) + x1 * std::cos(th);
            }, 1e-4, 2e-4);  // f32 angles of positions in the thousands: ~1e-4 absolute
        }
    }
}

TEST(CpuOps, RopeYarn) {
    CpuRunner r(3);
    const int64_t hd = 32, nh = 2, nt = 3;
    RopeParams p;
    p.mode = RopeMode::neox;
    p.n_rot = 32;
    p.n_ctx_orig = 4096;
    p.freq_base = 10000.0f;
    p.freq_scale = 0.25f;
    p.ext_factor = 1.0f;
    p.attn_factor = 1.0f;
    Graph g;
    Tensor* a = g.input("a", GT::F32, {hd, nh, nt, 1});
    Tensor* pos = g.input("pos", GT::I32, {nt, 1, 1, 1});
    Tensor* out = g.rope(a, pos, p);
    g.mark_output(out);
    r.sched.allocate(g);
    fill_random(a, 14);
    const int32_t positions[nt] = {3, 1000, 9000};
    tensor_set(*pos, positions, sizeof(positions));
    r.sched.compute(g);
    // YaRN as ggml defines it: ramp between the correction dims, magnitude 1 + 0.1 ln(1/s).
    auto corr = [&](double beta) {
        return p.n_rot * std::log(p.n_ctx_orig / (beta * 2 * std::numbers::pi)) / (2 * std::log(double(p.freq_base)));
    };
    const double low = std::max(0.0, std::floor(corr(p.beta_fast)));
    const double high = std::min(double(p.n_rot - 1), std::ceil(corr(p.beta_slow)));
    const double mscale = 1.0 + 0.1 * std::log(1.0 / p.freq_scale);
    expect_close(*out, [&](auto i0, auto i1, auto i2, auto) -> double {
        const int64_t half = p.n_rot / 2, pair = i0 % half;
        const double extrap = ref_theta(p, pair, positions[i2], nullptr);
        const double ramp = 1.0 - std::clamp((double(pair) - low) / std::max(0.001, high - low), 0.0, 1.0);
        const double th = extrap * p.freq_scale * (1 - ramp) + extrap * ramp;
        const double x0 = get_f32(*a, pair, i1, i2), x1 = get_f32(*a, pair + half, i1, i2);
        return mscale * (i0 < half ? x0 * std::cos(th) - x1 * std::sin(th) : x0 * std::sin(th) + x1 * std::cos(th));
    }, 1e-4, 1e-3);
}

// Shifting roped keys by d equals roping them at p + d (up to the cache's f16 rounding).
TEST(CpuOps, RopeShiftMovesCachedKeys) {
    for (GT type : {GT::F32, GT::F16}) {
        CpuRunner r(2);
        const int64_t hd = 16, nh = 2, nc = 6;
        RopeParams p;
        p.n_rot = 16;
        Tensor cache = make_tensor(type, {hd, nh, nc, 1});
        auto buf = r.backend->alloc_buffer(cache.nbytes());
        buf->place(cache);
        Graph g;
        Tensor* x = g.input("x", GT::F32, {hd, nh, nc, 1});
        Tensor* pos = g.input("pos", GT::I32, {nc, 1, 1, 1});
        Tensor* delta = g.input("delta", GT::I32, {nc, 1, 1, 1});
        Tensor* target = g.input("target", GT::I32, {nc, 1, 1, 1});
        Tensor* written = g.cpy(g.rope(x, pos, p), &cache);
        Tensor* shifted = g.rope_shift(written, delta, p);
        Tensor* expect = g.rope(x, target, p);
        g.mark_output(expect);
        g.mark_output(shifted);
        r.sched.allocate(g);
        fill_random(x, 15);
        const int32_t p0[nc] = {0, 1, 2, 3, 4, 5}, d[nc] = {-0, 5, -2, 17, 100, -5};
        int32_t t[nc];
        for (int i = 0; i < nc; ++i) t[i] = p0[i] + d[i];
        tensor_set(*pos, p0, sizeof(p0));
        tensor_set(*delta, d, sizeof(d));
        tensor_set(*target, t, sizeof(t));
        r.sched.compute(g);
        const double tol = type == GT::F32 ? 1e-5 : 2e-3;
        std::vector<float> row(hd);
        for (int64_t c = 0; c < nc; ++c)
            for (int64_t h = 0; h < nh; ++h) {
                load_row(type, cache.element(0, h, c), row.data(), hd);
                for (int64_t i = 0; i < hd; ++i) ASSERT_NEAR(row[i], get_f32(*expect, i, h, c), tol) << c << "," << h << "," << i;
            }
    }
}

TEST(CpuOps, ContCpyAndSetRowsIntoCache) {
    for (GT type : {GT::F32, GT::F16, GT::Q8_0}) {
        CpuRunner r(3);
        const int64_t ne0 = 64, n_ctx = 9, n_new = 3, offset = 4;
        Tensor cache = make_tensor(type, {ne0, n_ctx, 1, 1}, nullptr, "cache");
        Tensor cache2 = make_tensor(type, {ne0, n_ctx, 1, 1}, nullptr, "cache2");
        auto buf = r.backend->alloc_buffer(cache.nbytes() + cache2.nbytes() + 2 * Buffer::kAlign);
        buf->place(cache);
        buf->place(cache2);
        buf->clear(0);
        Graph g;
        Tensor* src = transposed_input(g, "src", {ne0, n_new, 1, 1});
        Tensor* c = g.cont(src);
        Tensor* dst_view = g.view_2d(&cache, ne0, n_new, cache.nb[1], offset * cache.nb[1]);
        g.cpy(src, dst_view);
        Tensor* rows = g.input("rows", GT::I32, {n_new, 1, 1, 1});
        g.set_rows(&cache2, src, rows);
        g.mark_output(c);
        r.sched.allocate(g);
        fill_random(src->view_src, 16);
        const int32_t row_ids[n_new] = {8, 0, 5};
        tensor_set(*rows, row_ids, sizeof(row_ids));
        r.sched.compute(g);
        expect_close(*c, [&](auto i0, auto i1, auto, auto) { return get_f32(*src, i0, i1); }, 0, 0);
        const double tol = type == GT::F32 ? 0.0 : type == GT::F16 ? 1e-3 : 1.0 / 127 / 2 + 1e-3;
        std::vector<float> row(ne0);
        for (int64_t j = 0; j < n_ctx; ++j) {
            for (const Tensor* t : {&cache, &cache2}) {
                load_row(type, static_cast<uint8_t*>(t->data) + j * t->nb[1], row.data(), ne0);
                int64_t from = -1;
                if (t == &cache && j >= offset && j < offset + n_new) from = j - offset;
                if (t == &cache2)
                    for (int64_t s = 0; s < n_new; ++s)
                        if (row_ids[s] == j) from = s;
                for (int64_t i = 0; i < ne0; ++i) {
                    const double want = from < 0 ? 0.0 : get_f32(*src, i, from);
                    ASSERT_NEAR(row[i], want, tol) << t->get_name() << " row " << j << " col " << i;
                }
            }
        }
    }
}

TEST(CpuOps, Concat) {
    for (int dim = 0; dim < 3; ++dim) {
        CpuRunner r(3);
        std::array<int64_t, 4> na{5, 3, 2, 1}, nb{5, 3, 2, 1};
        nb[dim] = 4;
        Graph g;
        Tensor* a = transposed_input(g, "a", na);
        Tensor* b = g.input("b", GT::F32, nb);
        Tensor* out = g.concat(a, b, dim);
        g.mark_output(out);
        run(r, g, {a->view_src, b});
        expect_close(*out, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) -> double {
            int64_t c[4] = {i0, i1, i2, i3};
            if (c[dim] < na[dim]) return get_f32(*a, c[0], c[1], c[2], c[3]);
            c[dim] -= na[dim];
            return get_f32(*b, c[0], c[1], c[2], c[3]);
        }, 0, 0);
    }
}

}  // namespace
}  // namespace pocket::test
