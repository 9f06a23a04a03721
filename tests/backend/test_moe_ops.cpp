// The mixture-of-experts ops: top_k (largest first, ties to the lowest index) and mul_mat_id,
// whose every element must be bit for bit the kernels' vec_dot of (the chosen expert's row,
// the token's activation row), i.e. what mul_mat on that expert gives, for any thread count,
// any number of tokens and either activation layout (one row per token or one per slot).
#include "kernels/kernels.hpp"
#include "op_test_util.hpp"
#include "pocket/error.hpp"

#include <algorithm>

namespace pocket::test {
namespace {

using GT = GgmlType;

TEST(MoeOps, TopKLargestFirstTiesToLowestIndex) {
    CpuRunner r(3);
    Graph g;
    Tensor* a = g.input("a", GT::F32, {6, 4, 1, 1});
    Tensor* ids = g.top_k(a, 3);
    g.mark_output(ids);
    r.sched.allocate(g);
    const float v[4][6] = {{0.1f, 0.7f, 0.3f, 0.7f, -1.0f, 0.2f},   // tie 1/3 -> 1 first
                           {5.0f, 5.0f, 5.0f, 5.0f, 5.0f, 5.0f},    // all equal -> 0, 1, 2
                           {-3.0f, -2.0f, -1.0f, -4.0f, -5.0f, -6.0f},
                           {0.0f, 0.0f, 1.0f, 0.0f, 2.0f, 0.0f}};
    tensor_set(*a, v, sizeof v);
    r.sched.compute(g);
    const int32_t want[4][3] = {{1, 3, 2}, {0, 1, 2}, {2, 1, 0}, {4, 2, 0}};
    std::vector<int32_t> got(12);
    tensor_get(*ids, got.data(), got.size() * sizeof(int32_t));
    for (int t = 0; t < 4; ++t)
        for (int i = 0; i < 3; ++i) EXPECT_EQ(got[t * 3 + i], want[t][i]) << "row " << t << " slot " << i;
}

TEST(MoeOps, TopKRejectsKOutsideTheRow) {
    Graph g;
    Tensor* a = g.input("a", GT::F32, {6, 4, 1, 1});
    EXPECT_THROW(g.top_k(a, 7), Error);
    EXPECT_THROW(g.top_k(a, 0), Error);
}

// Expert choice of token t, slot i: deterministic, uneven (expert 2 popular, expert 5 unused).
int32_t expert_for(int64_t t, int64_t i, int64_t n_used) {
    static const int32_t pattern[] = {2, 0, 2, 3, 1, 2, 4, 0, 2, 3, 6, 2, 1};
    return static_cast<int32_t>((pattern[(t * n_used + i) % 13] + i * 3) % 7);  // 7 experts of 8: 7 never chosen
}

void check_mul_mat_id(GT type, int64_t n_tokens, int64_t n_used, bool per_slot_rows, int n_threads, bool one_expert = false) {
    SCOPED_TRACE(std::string(ggml_type_info(type).name) + " tokens " + std::to_string(n_tokens) + (per_slot_rows ? " per-slot rows" : "") +
                 " threads " + std::to_string(n_threads));
    const kernels::TypeKernels* kt = kernels::type_kernels(type);
    CpuRunner r(n_threads);
    const int64_t k = 256, n = 37, n_expert = 8;
    Tensor w = make_tensor(type, {k, n, n_expert, 1});
    auto buf = r.backend->alloc_buffer(w.nbytes());
    buf->place(w);
    const auto wf = random_floats(static_cast<size_t>(k * n * n_expert), 41);
    kernels::quantize_rows(type, wf.data(), w.data, n * n_expert, k);
    Graph g;
    Tensor* x = g.input("x", GT::F32, {k, per_slot_rows ? n_used : 1, n_tokens, 1});
    Tensor* ids = g.input("ids", GT::I32, {n_used, n_tokens, 1, 1});
    Tensor* out = g.mul_mat_id(&w, x, ids);
    g.mark_output(out);
    r.sched.allocate(g);
    fill_random(x, 42);
    std::vector<int32_t> chosen;
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t i = 0; i < n_used; ++i) chosen.push_back(one_expert ? 1 : expert_for(t, i, n_used));
    tensor_set(*ids, chosen.data(), chosen.size() * sizeof(int32_t));
    r.sched.compute(g);
    ASSERT_EQ(out->ne[0], n);
    ASSERT_EQ(out->ne[1], n_used);
    ASSERT_EQ(out->ne[2], n_tokens);

    const auto& act = ggml_type_info(kt->vec_dot_type);
    std::vector<uint8_t> a(static_cast<size_t>(k / act.block_size) * act.block_bytes);
    for (int64_t t = 0; t < n_tokens; ++t)
        for (int64_t i = 0; i < n_used; ++i) {
            kernels::convert_activation_row(kt->vec_dot_type, static_cast<const float*>(x->element(0, per_slot_rows ? i : 0, t)), a.data(), k);
            const int32_t e = chosen[static_cast<size_t>(t * n_used + i)];
            for (int64_t row = 0; row < n; ++row) {
                float want;
                kt->vec_dot(k, &want, static_cast<const uint8_t*>(w.data) + e * w.nb[2] + row * w.nb[1], a.data());
                const float got = get_f32(*out, row, i, t);
                ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << "token " << t << " slot " << i << " row " << row << ": " << got << " vs " << want;
            }
        }
}

TEST(MoeOps, MulMatIdIsTheChosenExpertsVecDotBitwise) {
    for (GT type : {GT::F32, GT::F16, GT::Q8_0, GT::Q4_K, GT::Q6_K})
        for (int64_t n_tokens : {1, 3, 29})
            for (int threads : {1, 3}) {
                check_mul_mat_id(type, n_tokens, 2, false, threads);
                check_mul_mat_id(type, n_tokens, 3, true, threads);
            }
}

// Every slot of every token on one expert: more rows for it than there are tokens.
TEST(MoeOps, MulMatIdOneExpertForEverySlot) {
    for (int threads : {1, 3}) check_mul_mat_id(GT::Q8_0, 20, 3, true, threads, /*one_expert=*/true);
}

TEST(MoeOps, MulMatIdRejectsMismatchedIds) {
    Graph g;
    Tensor w = make_tensor(GT::F32, {64, 8, 4, 1});
    Tensor* x = g.input("x", GT::F32, {64, 1, 5, 1});
    EXPECT_THROW(g.mul_mat_id(&w, x, g.input("ids", GT::I32, {2, 4, 1, 1})), Error);   // 4 tokens of ids, 5 of x
    EXPECT_THROW(g.mul_mat_id(&w, x, g.input("ids2", GT::F32, {2, 5, 1, 1})), Error);  // not i32
    Tensor* x3 = g.input("x3", GT::F32, {64, 3, 5, 1});
    EXPECT_THROW(g.mul_mat_id(&w, x3, g.input("ids3", GT::I32, {2, 5, 1, 1})), Error);  // 3 rows per token, 2 slots
}

TEST(MoeOps, MulMatIdExpertOutOfRangeIsAnError) {
    CpuRunner r(2);
    Tensor w = make_tensor(GT::F32, {64, 8, 4, 1});
    auto buf = r.backend->alloc_buffer(w.nbytes());
    buf->place(w);
    Graph g;
    Tensor* x = g.input("x", GT::F32, {64, 1, 2, 1});
    Tensor* ids = g.input("ids", GT::I32, {1, 2, 1, 1});
    g.mark_output(g.mul_mat_id(&w, x, ids));
    r.sched.allocate(g);
    fill_random(x, 1);
    const int32_t bad[2] = {1, 4};
    tensor_set(*ids, bad, sizeof bad);
    EXPECT_THROW(r.sched.compute(g), Error);
}

}  // namespace
}  // namespace pocket::test
