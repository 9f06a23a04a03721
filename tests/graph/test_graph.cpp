// Tensor geometry, zero-copy views, graph construction checks and node selection.
#include "pocket/graph.hpp"

#include "pocket/error.hpp"

#include <gtest/gtest.h>

namespace pocket {
namespace {

TEST(Tensor, ContiguousStridesAndBytes) {
    Tensor t = make_tensor(GgmlType::F32, {5, 3, 2, 1});
    EXPECT_EQ(t.nb[0], 4u);
    EXPECT_EQ(t.nb[1], 20u);
    EXPECT_EQ(t.nb[2], 60u);
    EXPECT_EQ(t.nbytes(), 120u);
    EXPECT_TRUE(t.is_contiguous());
    Tensor q = make_tensor(GgmlType::Q8_0, {64, 3, 1, 1});
    EXPECT_EQ(q.nb[1], 68u);
    EXPECT_EQ(q.row_bytes(), 68u);
    EXPECT_EQ(q.nbytes(), 204u);
    EXPECT_THROW(make_tensor(GgmlType::Q8_0, {33, 1, 1, 1}), Error);
}

TEST(Graph, ViewsShareMemoryAndCopyNothing) {
    std::vector<float> data(5 * 3 * 2);
    Tensor base = make_tensor(GgmlType::F32, {5, 3, 2, 1}, data.data(), "base");
    Graph g;
    Tensor* tr = g.transpose(&base);
    EXPECT_EQ(tr->ne, (std::array<int64_t, 4>{3, 5, 2, 1}));
    EXPECT_EQ(tr->nb[0], 20u);
    EXPECT_EQ(tr->nb[1], 4u);
    EXPECT_FALSE(tr->is_contiguous());
    EXPECT_EQ(tr->nbytes(), base.nbytes());  // spans the same memory
    EXPECT_EQ(tr->data, data.data());
    EXPECT_EQ(tr->element(2, 4, 1), &data[1 * 15 + 2 * 5 + 4]);

    Tensor* p = g.permute(&base, 2, 0, 1, 3);  // dim0 -> 2, dim1 -> 0, dim2 -> 1
    EXPECT_EQ(p->ne, (std::array<int64_t, 4>{3, 2, 5, 1}));
    EXPECT_EQ(p->element(1, 1, 4), &data[1 * 15 + 1 * 5 + 4]);

    Tensor* r = g.reshape(&base, {15, 2, 1, 1});
    EXPECT_TRUE(r->is_contiguous());
    EXPECT_EQ(r->data, data.data());
    EXPECT_THROW(g.reshape(tr, {15, 2, 1, 1}), Error);  // not contiguous
    EXPECT_THROW(g.reshape(&base, {4, 4, 1, 1}), Error);

    Tensor* v = g.view_2d(&base, 5, 2, base.nb[1], base.nb[1]);  // rows 1..2 of plane 0
    EXPECT_EQ(v->data, &data[5]);
    EXPECT_EQ(v->base(), &base);
    EXPECT_THROW(g.view_1d(&base, 10, 25 * 4), Error);  // past the end
}

TEST(Graph, ShapeErrorsNameTheOp) {
    Graph g;
    Tensor* a = g.input("a", GgmlType::F32, {8, 4, 1, 1});
    Tensor* b = g.input("b", GgmlType::F32, {3, 1, 1, 1});
    try {
        g.add(a, b);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("add("), std::string::npos) << e.what();
    }
    Tensor* w = g.input("w", GgmlType::F32, {7, 2, 1, 1});
    EXPECT_THROW(g.mul_mat(w, a), Error);
}

TEST(Graph, NodesKeepOutputsAndCacheWritesInCreationOrder) {
    std::vector<float> cache_mem(8 * 4);
    Tensor cache = make_tensor(GgmlType::F32, {8, 4, 1, 1}, cache_mem.data(), "cache");
    Graph g;
    Tensor* x = g.input("x", GgmlType::F32, {8, 2, 1, 1});
    Tensor* unused = g.silu(x);
    Tensor* y = g.scale(x, 2.0f);
    Tensor* write = g.cpy(y, g.view_2d(&cache, 8, 2, cache.nb[1], 0));
    Tensor* out = g.rms_norm(g.view_2d(&cache, 8, 4, cache.nb[1], 0), 1e-5f);
    g.mark_output(out);
    auto nodes = g.nodes();
    std::vector<Tensor*> list(nodes.begin(), nodes.end());
    EXPECT_EQ(std::count(list.begin(), list.end(), unused), 0);
    auto at = [&](Tensor* t) { return std::find(list.begin(), list.end(), t) - list.begin(); };
    ASSERT_LT(at(write), static_cast<ptrdiff_t>(list.size()));
    EXPECT_LT(at(y), at(write));
    EXPECT_LT(at(write), at(out));
}

}  // namespace
}  // namespace pocket
