// Ops on random shapes (1..9 per dim, broadcast dims chosen at random, operands randomly
// transposed) against the double reference; and type round trips through cpy.
#include "backend/cpu/convert.hpp"
#include "op_test_util.hpp"

namespace pocket::test {
namespace {

using GT = GgmlType;

TEST(CpuOpsRandom, BroadcastBinaryUnaryAndNormOnRandomShapes) {
    std::mt19937 rng(2024);
    for (int round = 0; round < 40; ++round) {
        std::array<int64_t, 4> ne{}, nb{};
        for (int i = 0; i < 4; ++i) {
            ne[i] = 1 + static_cast<int64_t>(rng() % 9);
            nb[i] = rng() % 3 == 0 ? 1 : ne[i];  // broadcast this dim of b
        }
        const bool transposed = rng() % 2;
        const int n_threads = 1 + static_cast<int>(rng() % 4);
        CpuRunner r(n_threads);
        Graph g;
        Tensor* a = transposed ? g.transpose(g.input("a", GT::F32, {ne[1], ne[0], ne[2], ne[3]}))
                               : g.input("a", GT::F32, ne);
        Tensor* b = g.input("b", GT::F32, nb);
        Tensor* sum = g.add(a, b);
        Tensor* prod = g.mul(a, b);
        Tensor* act = g.silu(a);
        Tensor* rn = g.rms_norm(a, 1e-6f);
        for (Tensor* t : {sum, prod, act, rn}) g.mark_output(t);
        r.sched.allocate(g);
        fill_random(a->view_src ? a->view_src : a, 100 + round);
        fill_random(b, 200 + round);
        r.sched.compute(g);
        SCOPED_TRACE(testing::Message() << "round " << round << " " << tensor_desc(*a) << " + " << tensor_desc(*b));
        auto bv = [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
            return double(get_f32(*b, i0 % nb[0], i1 % nb[1], i2 % nb[2], i3 % nb[3]));
        };
        expect_close(*sum, [&](auto i0, auto i1, auto i2, auto i3) { return get_f32(*a, i0, i1, i2, i3) + bv(i0, i1, i2, i3); });
        expect_close(*prod, [&](auto i0, auto i1, auto i2, auto i3) { return get_f32(*a, i0, i1, i2, i3) * bv(i0, i1, i2, i3); });
        expect_close(*act, [&](auto i0, auto i1, auto i2, auto i3) {
            const double x = get_f32(*a, i0, i1, i2, i3);
            return x / (1 + std::exp(-x));
        });
        expect_close(*rn, [&](auto i0, auto i1, auto i2, auto i3) {
            double s2 = 0;
            for (int64_t i = 0; i < a->ne[0]; ++i) s2 += double(get_f32(*a, i, i1, i2, i3)) * get_f32(*a, i, i1, i2, i3);
            return get_f32(*a, i0, i1, i2, i3) / std::sqrt(s2 / double(a->ne[0]) + 1e-6);
        }, 1e-5, 1e-5);
    }
}

// f32 -> T -> f32 through two cpy nodes into persistent tensors, for each storage type.
TEST(CpuOpsRandom, CpyRoundTripsThroughEachCacheType) {
    for (GT type : {GT::F32, GT::F16, GT::Q8_0}) {
        CpuRunner r(3);
        const int64_t ne0 = 96, rows = 7;
        Tensor mid = make_tensor(type, {ne0, rows, 1, 1}, nullptr, "mid");
        Tensor back = make_tensor(GT::F32, {ne0, rows, 1, 1}, nullptr, "back");
        auto buf = r.backend->alloc_buffer(mid.nbytes() + back.nbytes() + 2 * Buffer::kAlign);
        buf->place(mid);
        buf->place(back);
        Graph g;
        Tensor* src = g.input("src", GT::F32, {ne0, rows, 1, 1});
        g.cpy(g.cpy(src, &mid), &back);
        r.sched.allocate(g);
        fill_random(src, 77, -3.0f, 3.0f);
        r.sched.compute(g);
        std::vector<float> want(static_cast<size_t>(ne0)), got(static_cast<size_t>(ne0));
        for (int64_t j = 0; j < rows; ++j) {
            // The round trip equals the backend's own row conversions, exactly.
            std::vector<uint8_t> tmp(mid.row_bytes());
            cpu::row_from_f32(type, static_cast<const float*>(src->element(0, j)), tmp.data(), ne0);
            cpu::row_to_f32(type, tmp.data(), want.data(), ne0);
            std::memcpy(got.data(), back.element(0, j), static_cast<size_t>(ne0) * 4);
            ASSERT_EQ(got, want) << ggml_type_info(type).name << " row " << j;
        }
    }
}

}  // namespace
}  // namespace pocket::test
