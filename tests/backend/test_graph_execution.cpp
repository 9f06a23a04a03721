// Whole-graph properties on a small llama-shaped model: bitwise identical results for any
// thread count, for one batch vs token by token, with poisoned freed memory, and split over
// two backends; the planner reuses memory.
#include "mini_llama.hpp"

#include <cmath>

namespace pocket::test {
namespace {

const std::vector<int32_t> kPrompt = {1, 17, 42, 5, 33, 8, 49};

// Logits of every prompt token from one prefill batch.
std::vector<uint8_t> prefill_logits(Backend& backend, Scheduler& sched, GgmlType wtype = GgmlType::F32,
                                    GgmlType ctype = GgmlType::F16, size_t* arena = nullptr,
                                    size_t* unplanned = nullptr) {
    MiniLlama model(backend, wtype, ctype);
    Graph g;
    const auto n = static_cast<int64_t>(kPrompt.size());
    auto in = model.build(g, n, n);
    sched.allocate(g);
    std::vector<int32_t> rows(kPrompt.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    MiniLlama::set_inputs(in, kPrompt, 0, rows);
    sched.compute(g);
    if (arena) *arena = sched.arena_bytes(0);
    if (unplanned) *unplanned = sched.unplanned_bytes(0);
    return bytes_of(*in.logits);
}

bool finite(const std::vector<uint8_t>& bytes) {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        float f;
        std::memcpy(&f, &bytes[i], 4);
        if (!std::isfinite(f)) return false;
    }
    return true;
}

TEST(GraphExecution, ThreadCountsGiveBitwiseIdenticalLogits) {
    for (GgmlType wtype : {GgmlType::F32, GgmlType::F16}) {
        std::vector<uint8_t> ref;
        for (int n_threads : {1, 3, 2}) {
            CpuRunner r(n_threads);
            auto logits = prefill_logits(*r.backend, r.sched, wtype);
            ASSERT_TRUE(finite(logits));
            if (ref.empty())
                ref = logits;
            else
                EXPECT_EQ(logits, ref) << "-t " << n_threads << " differs from -t 1";
        }
    }
}

// Small ops on one thread (the default) or split (tests' default): the same bits.
TEST(GraphExecution, SmallOpsOnOneThreadChangeNothing) {
    CpuRunner split(3);
    CpuRunner mixed(3, false, CpuBackendOptions{}.min_parallel_cost);
    EXPECT_EQ(prefill_logits(*split.backend, split.sched), prefill_logits(*mixed.backend, mixed.sched));
}

// One graph per batch size, reused across steps: only inputs change.
TEST(GraphExecution, TokenByTokenEqualsOneBatch) {
    CpuRunner r(2);
    const auto batch = prefill_logits(*r.backend, r.sched);

    CpuRunner r2(3);
    MiniLlama model(*r2.backend, GgmlType::F32, GgmlType::F16);
    Graph g;
    auto in = model.build(g, 1, 1);
    r2.sched.allocate(g);
    const size_t row_bytes = MiniLlama::n_vocab * sizeof(float);
    for (size_t t = 0; t < kPrompt.size(); ++t) {
        MiniLlama::set_inputs(in, {kPrompt[t]}, static_cast<int32_t>(t), {0});
        r2.sched.compute(g);
        const auto step = bytes_of(*in.logits);
        ASSERT_EQ(0, std::memcmp(step.data(), batch.data() + t * row_bytes, row_bytes)) << "token " << t;
    }
}

TEST(GraphExecution, PlannerReusesMemory) {
    CpuRunner r(1);
    size_t arena = 0, unplanned = 0;
    prefill_logits(*r.backend, r.sched, GgmlType::F32, GgmlType::F16, &arena, &unplanned);
    EXPECT_GT(arena, 0u);
    EXPECT_LT(arena * 3, unplanned) << "arena " << arena << " vs " << unplanned << " without reuse";
}

// Poison mode fills every freed region with NaN right after its last reader: if the planner
// let two live tensors share memory, NaN would reach the logits.
TEST(GraphExecution, PoisonedFreedMemoryDoesNotReachResults) {
    CpuRunner plain(2);
    const auto ref = prefill_logits(*plain.backend, plain.sched);

    CpuRunner poisoned(2, /*poison=*/true);
    MiniLlama model(*poisoned.backend, GgmlType::F32, GgmlType::F16);
    Graph g;
    const auto n = static_cast<int64_t>(kPrompt.size());
    auto in = model.build(g, n, n);
    poisoned.sched.allocate(g);
    std::vector<int32_t> rows(kPrompt.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    MiniLlama::set_inputs(in, kPrompt, 0, rows);
    poisoned.sched.compute(g);
    EXPECT_EQ(bytes_of(*in.logits), ref);

    // The poison really ran: the first intermediate (the embeddings) is dead and NaN now,
    // unless its region was handed to a later tensor.
    size_t nan_nodes = 0;
    for (Tensor* t : g.nodes())
        if (!op_is_view(t->op) && !t->view_src && !(t->flags & kTensorOutput)) {
            float f;
            std::memcpy(&f, t->data, 4);
            nan_nodes += std::isnan(f);
        }
    EXPECT_GT(nan_nodes, 0u);
}

TEST(GraphExecution, TwoBackendsSplitByLayerMatchOne) {
    CpuRunner one(2);
    const auto ref = prefill_logits(*one.backend, one.sched);

    auto a = make_cpu_backend({.n_threads = 2, .min_parallel_cost = 0, .adapt_threads = false});
    auto b = make_cpu_backend({.n_threads = 3, .min_parallel_cost = 0, .adapt_threads = false});
    // Layers 1.. on the second backend (like -ngl 2 of 3), the embeddings and layer 0 on the first.
    Scheduler split({a.get(), b.get()}, [](int layer) { return layer >= 1 ? 1 : 0; });
    MiniLlama model(*a, GgmlType::F32, GgmlType::F16);
    Graph g;
    const auto n = static_cast<int64_t>(kPrompt.size());
    auto in = model.build(g, n, n);
    split.allocate(g);
    std::vector<int32_t> rows(kPrompt.size());
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    MiniLlama::set_inputs(in, kPrompt, 0, rows);
    split.compute(g);
    EXPECT_EQ(bytes_of(*in.logits), ref);
    EXPECT_EQ(split.n_splits(), 2u);
    EXPECT_GE(split.n_copies(), 3u);  // the residual stream, positions, mask, ...
    EXPECT_GT(split.arena_bytes(0), 0u);
    EXPECT_GT(split.arena_bytes(1), 0u);

    // Re-running with new inputs reuses the split (copies are redone each compute).
    MiniLlama::set_inputs(in, kPrompt, 0, rows);
    split.compute(g);
    EXPECT_EQ(bytes_of(*in.logits), ref);
}

}  // namespace
}  // namespace pocket::test
