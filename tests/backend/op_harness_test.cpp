// The op harness (ggml's test-backend-ops is the model): every op the architectures use,
// with the operand types and shape classes they use, runs on each device other than the
// CPU and is compared with the CPU backend by normalised mean squared error,
//   nmse = sum (device - cpu)^2 / sum cpu^2,
// against a bound per op. Results are read only through tensor_get, inputs written only
// through tensor_set, and persistent operands (weights, KV caches) live in a buffer of the
// device under test, so the harness also proves placement and uploads.
//
// Until a GPU backend exists it runs against the copy-through device (the CPU's kernels on
// memory nothing else can dereference); a GPU backend's devices are picked up by the same
// test when they are registered.
#include "op_test_util.hpp"

#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <cstring>
#include <deque>
#include <iostream>
#include <limits>
#include <string>

namespace pocket::test {
namespace {

// Builds one case's graph for one device: its leaves in that device's memory, its inputs
// in the graph, all filled with the same pseudo-random values whichever device it is for.
class CaseEnv {
public:
    explicit CaseEnv(Device& device) : device_(device) {}

    // A persistent tensor (weight, KV cache) of any type, random values in [lo, hi).
    Tensor* leaf(GgmlType type, std::array<int64_t, 4> ne, float lo = -1.0f, float hi = 1.0f) {
        Tensor& t = leaves_.emplace_back(make_tensor(type, ne, nullptr, "leaf" + std::to_string(leaves_.size())));
        const auto v = random_floats(static_cast<size_t>(t.nelements()), next_seed(), lo, hi);
        std::vector<uint8_t> bytes(t.nbytes());
        kernels::quantize_rows(type, v.data(), bytes.data(), t.nrows(), t.ne[0]);
        buffers_.push_back(device_.alloc_buffer(t.nbytes()));
        buffers_.back()->place(t);
        tensor_set(t, bytes.data(), bytes.size());
        return &t;
    }
    // An f32 graph input, random values in [lo, hi).
    Tensor* input(Graph& g, std::array<int64_t, 4> ne, float lo = -1.0f, float hi = 1.0f) {
        Tensor* t = g.input("in" + std::to_string(pending_.size()), GgmlType::F32, ne);
        auto v = random_floats(static_cast<size_t>(t->nelements()), next_seed(), lo, hi);
        pending_.push_back({t, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(v.data()), reinterpret_cast<uint8_t*>(v.data() + v.size()))});
        return t;
    }
    // An i32 input with the given values (row ids, positions, deltas).
    Tensor* ids(Graph& g, const std::vector<int32_t>& values) {
        Tensor* t = g.input("ids" + std::to_string(pending_.size()), GgmlType::I32, {static_cast<int64_t>(values.size()), 1, 1, 1});
        pending_.push_back({t, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                                    reinterpret_cast<const uint8_t*>(values.data() + values.size()))});
        return t;
    }
    // An attention mask [n_kv, n_q]: query t sees cells up to n_kv - n_q + t, and, with a
    // window, only the last `window` of those; -inf elsewhere.
    Tensor* mask(Graph& g, int64_t n_kv, int64_t n_q, int64_t window = 0) {
        std::vector<float> m(static_cast<size_t>(n_kv * n_q), -std::numeric_limits<float>::infinity());
        for (int64_t t = 0; t < n_q; ++t)
            for (int64_t c = 0; c <= n_kv - n_q + t; ++c)
                if (window == 0 || c > n_kv - n_q + t - window) m[static_cast<size_t>(t * n_kv + c)] = 0.0f;
        Tensor* t = g.input("mask", GgmlType::F32, {n_kv, n_q, 1, 1});
        pending_.push_back({t, std::vector<uint8_t>(reinterpret_cast<uint8_t*>(m.data()), reinterpret_cast<uint8_t*>(m.data() + m.size()))});
        return t;
    }
    void set_inputs() {
        for (auto& [t, bytes] : pending_) tensor_set(*t, bytes.data(), bytes.size());
    }

private:
    uint32_t next_seed() { return 1000 + seed_++; }
    Device& device_;
    std::deque<Tensor> leaves_;
    std::vector<std::unique_ptr<Buffer>> buffers_;
    std::vector<std::pair<Tensor*, std::vector<uint8_t>>> pending_;
    uint32_t seed_ = 0;
};

struct OpCase {
    std::string name;
    double max_nmse;
    // Adds the op under test (tagged layer 0) and returns its result: an f32 tensor, or the
    // alias of a write into a leaf (cpy, set_rows, rope_shift), whose whole leaf is compared.
    std::function<Tensor*(Graph&, CaseEnv&)> build;
};

// The result as floats, read through tensor_get only.
std::vector<float> read_result(const Tensor* out) {
    const Tensor& t = out->view_src ? *out->base() : *out;
    std::vector<uint8_t> bytes(t.nbytes());
    tensor_get(t, bytes.data(), bytes.size());
    std::vector<float> v(static_cast<size_t>(t.nelements()));
    for (int64_t r = 0; r < t.nrows(); ++r)
        kernels::dequantize_row(t.type, bytes.data() + static_cast<size_t>(r) * t.nb[1], v.data() + r * t.ne[0], t.ne[0]);
    return v;
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
    double err = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::isinf(want[i]) && got[i] == want[i]) continue;
        const double d = static_cast<double>(got[i]) - want[i];
        err += d * d;
        norm += static_cast<double>(want[i]) * want[i];
    }
    if (std::isnan(err)) return std::numeric_limits<double>::infinity();
    return norm > 0 ? err / norm : err;
}

struct CaseResult {
    std::vector<float> values;
    size_t copies = 0;  // tensors the scheduler had to bring to the device (0: everything ran there)
};

CaseResult run_case(const OpCase& c, Device& device) {
    auto cpu = make_cpu_backend({.n_threads = 2, .min_parallel_cost = 0, .adapt_threads = false});
    std::unique_ptr<Backend> dev = device.is_host() ? nullptr : device.make_backend(2);
    std::vector<Backend*> backends = dev ? std::vector<Backend*>{dev.get(), cpu.get()} : std::vector<Backend*>{cpu.get()};
    Scheduler sched(backends, [](int) { return 0; });
    CaseEnv env(device);
    Graph g;
    g.set_layer(0);
    Tensor* out = c.build(g, env);
    g.mark_output(out);
    sched.allocate(g);
    env.set_inputs();
    sched.compute(g);
    return {read_result(out), sched.n_copies()};
}

const GgmlType kWeightTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0, GgmlType::Q4_1,
                                 GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K,
                                 GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS};
const GgmlType kKvTypes[] = {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0};

std::string type_name(GgmlType t) { return std::string(ggml_type_info(t).name); }

std::vector<OpCase> all_cases() {
    std::vector<OpCase> cases;
    auto add = [&](std::string name, double bound, std::function<Tensor*(Graph&, CaseEnv&)> f) {
        cases.push_back({std::move(name), bound, std::move(f)});
    };
    constexpr double kExact = 1e-7, kMatmul = 5e-4, kAttn = 5e-4;

    // Embedding lookup: rows of a weight of every type an embedding comes in.
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K})
        add("get_rows/" + type_name(t), kExact, [t](Graph& g, CaseEnv& e) {
            return g.get_rows(e.leaf(t, {256, 20, 1, 1}), e.ids(g, {3, 0, 19, 7, 7, 12, 1}));
        });
    add("get_rows/f32_activations_last_row", kExact, [](Graph& g, CaseEnv& e) { return g.get_rows(e.input(g, {67, 9, 1, 1}), e.ids(g, {8})); });

    // Element-wise, with odd sizes, broadcasting and strided operands.
    add("add/same_shape", kExact, [](Graph& g, CaseEnv& e) { return g.add(e.input(g, {67, 13, 3, 1}), e.input(g, {67, 13, 3, 1})); });
    add("add/broadcast_rows", kExact, [](Graph& g, CaseEnv& e) { return g.add(e.input(g, {67, 13, 3, 1}), e.leaf(GgmlType::F32, {67, 1, 1, 1})); });
    add("mul/broadcast_norm_weight", kExact, [](Graph& g, CaseEnv& e) { return g.mul(e.input(g, {67, 13, 1, 1}), e.leaf(GgmlType::F32, {67, 1, 1, 1})); });
    add("mul/broadcast_dim2", kExact, [](Graph& g, CaseEnv& e) { return g.mul(e.input(g, {16, 5, 6, 1}), e.input(g, {16, 5, 2, 1})); });
    add("add/transposed_operand", kExact, [](Graph& g, CaseEnv& e) {
        return g.add(e.input(g, {13, 67, 1, 1}), g.transpose(e.input(g, {67, 13, 1, 1})));
    });
    add("scale", kExact, [](Graph& g, CaseEnv& e) { return g.scale(e.input(g, {67, 5, 1, 1}), 0.37f); });
    for (int64_t n : {67, 256})
        for (int64_t rows : {1, 7}) {
            add("rms_norm/" + std::to_string(n) + "x" + std::to_string(rows), kExact,
                [=](Graph& g, CaseEnv& e) { return g.rms_norm(e.input(g, {n, rows, 1, 1}), 1e-5f); });
            add("norm/" + std::to_string(n) + "x" + std::to_string(rows), kExact,
                [=](Graph& g, CaseEnv& e) { return g.norm(e.input(g, {n, rows, 1, 1}), 1e-6f); });
        }
    add("rms_norm/strided_rows", kExact, [](Graph& g, CaseEnv& e) {
        Tensor* x = e.input(g, {96, 6, 1, 1});
        return g.rms_norm(g.view_2d(x, 64, 6, x->nb[1], 16 * sizeof(float)), 1e-5f);
    });
    add("silu", kExact, [](Graph& g, CaseEnv& e) { return g.silu(e.input(g, {67, 9, 1, 1}, -6.0f, 6.0f)); });
    add("gelu", kExact, [](Graph& g, CaseEnv& e) { return g.gelu(e.input(g, {67, 9, 1, 1}, -6.0f, 6.0f)); });
    add("tanh", kExact, [](Graph& g, CaseEnv& e) { return g.tanh(e.input(g, {67, 9, 1, 1}, -6.0f, 6.0f)); });
    add("swiglu", kExact, [](Graph& g, CaseEnv& e) { return g.swiglu(e.input(g, {67, 9, 1, 1}, -4.0f, 4.0f), e.input(g, {67, 9, 1, 1})); });
    add("geglu", kExact, [](Graph& g, CaseEnv& e) { return g.geglu(e.input(g, {67, 9, 1, 1}, -4.0f, 4.0f), e.input(g, {67, 9, 1, 1})); });
    add("swiglu/views_of_one_tensor", kExact, [](Graph& g, CaseEnv& e) {  // phi3's fused gate_up
        Tensor* gu = e.input(g, {134, 9, 1, 1}, -4.0f, 4.0f);
        return g.swiglu(g.view_2d(gu, 67, 9, gu->nb[1], 0), g.view_2d(gu, 67, 9, gu->nb[1], 67 * sizeof(float)));
    });

    // Softmax with a mask, scale, soft-capping, causal and sliding-window rules.
    add("soft_max/mask_scale", kExact, [](Graph& g, CaseEnv& e) {
        return g.soft_max(e.input(g, {37, 11, 2, 1}, -5.0f, 5.0f), e.mask(g, 37, 11), {.scale = 0.125f});
    });
    add("soft_max/softcap_causal_window", kExact, [](Graph& g, CaseEnv& e) {
        return g.soft_max(e.input(g, {37, 11, 1, 1}, -50.0f, 50.0f), nullptr, {.scale = 1.0f, .softcap = 30.0f, .causal = 1, .window = 5});
    });

    // Matrix products: every weight type, one activation row (decode), a few, and a prompt
    // batch (a GPU backend may use a different kernel for each).
    for (GgmlType t : kWeightTypes)
        for (int64_t m : {1, 13, 40})
            add("mul_mat/" + type_name(t) + "/m" + std::to_string(m), kMatmul,
                [=](Graph& g, CaseEnv& e) { return g.mul_mat(e.leaf(t, {256, 48, 1, 1}), e.input(g, {256, m, 1, 1})); });
    for (int64_t m : {5, 21}) {
        const std::string cols = "/m" + std::to_string(m);
        add("mul_mat/f32_odd_k" + cols, kMatmul, [=](Graph& g, CaseEnv& e) { return g.mul_mat(e.leaf(GgmlType::F32, {67, 19, 1, 1}), e.input(g, {67, m, 1, 1})); });
        add("mul_mat/f16_broadcast_dim2" + cols, kMatmul, [=](Graph& g, CaseEnv& e) {
            return g.mul_mat(e.leaf(GgmlType::F16, {64, 16, 2, 1}), e.input(g, {64, m, 4, 1}));
        });
        add("mul_mat/q8_0_transposed_activations" + cols, kMatmul, [=](Graph& g, CaseEnv& e) {
            return g.mul_mat(e.leaf(GgmlType::Q8_0, {64, 24, 1, 1}), g.transpose(e.input(g, {m, 64, 1, 1})));
        });
    }

    // Rope: both modes, partial rotation, frequency factors, YaRN; and the K shift.
    for (RopeMode mode : {RopeMode::norm, RopeMode::neox})
        for (bool factors : {false, true}) {
            const std::string name = std::string("rope/") + (mode == RopeMode::norm ? "norm" : "neox") + (factors ? "/freq_factors" : "");
            add(name, kExact, [=](Graph& g, CaseEnv& e) {
                RopeParams p;
                p.mode = mode;
                p.n_rot = 64;
                p.freq_base = 500000.0f;
                return g.rope(e.input(g, {64, 4, 9, 1}), e.ids(g, {0, 1, 2, 3, 40, 41, 42, 511, 7}), p,
                              factors ? e.leaf(GgmlType::F32, {32, 1, 1, 1}, 1.0f, 8.0f) : nullptr);
            });
        }
    add("rope/neox_partial_yarn", kExact, [](Graph& g, CaseEnv& e) {
        RopeParams p;
        p.mode = RopeMode::neox;
        p.n_rot = 32;
        p.n_ctx_orig = 512;
        p.freq_scale = 0.25f;
        p.ext_factor = 1.0f;
        p.attn_factor = 1.0f;
        return g.rope(e.input(g, {64, 4, 5, 1}), e.ids(g, {0, 100, 1000, 2047, 5}), p);
    });
    for (GgmlType t : {GgmlType::F32, GgmlType::F16})
        for (RopeMode mode : {RopeMode::norm, RopeMode::neox})
            add("rope_shift/" + type_name(t) + (mode == RopeMode::norm ? "/norm" : "/neox"), kExact, [=](Graph& g, CaseEnv& e) {
                RopeParams p;
                p.mode = mode;
                p.n_rot = 64;
                Tensor* cache = e.leaf(t, {128, 12, 1, 1});  // [head_dim * n_head_kv, n_ctx]
                Tensor* cells = g.view_3d(cache, 64, 2, 7, 64 * cache->nb[0], cache->nb[1], 3 * cache->nb[1]);
                return g.rope_shift(cells, e.ids(g, std::vector<int32_t>(7, -3)), p);
            });

    // Layout and the KV cache writes, for every KV type.
    add("cont/permuted", kExact, [](Graph& g, CaseEnv& e) { return g.cont(g.permute(e.input(g, {9, 4, 64, 1}), 2, 1, 0, 3)); });
    for (GgmlType t : kKvTypes) {
        add("cpy/f32_into_" + type_name(t) + "_cells", kExact * 1e4, [=](Graph& g, CaseEnv& e) {
            Tensor* cache = e.leaf(t, {64, 12, 1, 1});
            return g.cpy(e.input(g, {64, 6, 1, 1}), g.view_2d(cache, 64, 6, cache->nb[1], 3 * cache->nb[1]));
        });
        add("cpy/" + type_name(t) + "_cells_moved", kExact, [=](Graph& g, CaseEnv& e) {  // context shift's move
            Tensor* cache = e.leaf(t, {64, 12, 1, 1});
            return g.cpy(g.view_2d(cache, 64, 4, cache->nb[1], 8 * cache->nb[1]), g.view_2d(cache, 64, 4, cache->nb[1], 2 * cache->nb[1]));
        });
        add("set_rows/" + type_name(t), kExact * 1e4, [=](Graph& g, CaseEnv& e) {
            return g.set_rows(e.leaf(t, {64, 20, 1, 1}), e.input(g, {64, 5, 1, 1}), e.ids(g, {4, 17, 0, 9, 10}));
        });
    }
    add("concat/dim0", kExact, [](Graph& g, CaseEnv& e) { return g.concat(e.input(g, {16, 5, 2, 1}), e.input(g, {9, 5, 2, 1}), 0); });
    add("concat/dim1", kExact, [](Graph& g, CaseEnv& e) { return g.concat(e.input(g, {16, 5, 2, 1}), e.input(g, {16, 3, 2, 1}), 1); });

    // Mixture of experts: the router's top-k (read back through the values it picks) and the
    // chosen experts' products, activations shared by the slots (gate, up) or one per slot (down).
    add("top_k", kExact, [](Graph& g, CaseEnv& e) {
        Tensor* a = e.input(g, {8, 13, 1, 1});
        return g.get_rows(g.reshape(a, {1, 8, 13, 1}), g.top_k(a, 2));
    });
    add("top_k/ties_to_the_lowest_index", kExact, [](Graph& g, CaseEnv& e) {  // values j and j + 8 tie
        Tensor* x = e.input(g, {8, 13, 1, 1});
        Tensor* a = g.concat(x, x, 0);
        // The picks, seen through other numbers at those places: a wrong tie shows.
        return g.get_rows(g.reshape(e.input(g, {16, 13, 1, 1}), {1, 16, 13, 1}), g.top_k(a, 3));
    });
    for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K})
        for (int64_t rows : {1, 2})
            add("mul_mat_id/" + type_name(t) + (rows == 1 ? "/shared_rows" : "/row_per_slot"), kMatmul, [=](Graph& g, CaseEnv& e) {
                Tensor* ids = g.reshape(e.ids(g, {3, 0, 1, 3, 3, 2, 0, 1, 2, 3, 1, 0, 3, 1}), {2, 7, 1, 1});
                return g.mul_mat_id(e.leaf(t, {256, 48, 4, 1}), e.input(g, {256, rows, 7, 1}), ids);
            });

    // Fused attention: grouped-query heads, every KV type, decode and prefill, odd cache
    // lengths, a mask with a sliding window, soft-capping.
    for (GgmlType t : kKvTypes)
        for (int64_t n_q : {1, 7})
            for (bool softcap : {false, true})
                add("flash_attn/" + type_name(t) + "/q" + std::to_string(n_q) + (softcap ? "/softcap" : ""), kAttn,
                    [=](Graph& g, CaseEnv& e) {
                        const int64_t n_kv = 45;
                        Tensor* k = e.leaf(t, {64, 2, n_kv, 1});
                        Tensor* v = e.leaf(t, {64, 2, n_kv, 1});
                        AttnParams p;
                        p.scale = 0.125f;
                        p.softcap = softcap ? 50.0f : 0.0f;
                        return g.flash_attn(e.input(g, {64, 8, n_q, 1}), k, v, e.mask(g, n_kv, n_q, softcap ? 20 : 0), p);
                    });
    add("flash_attn/f16/mask_and_layer_window", kAttn, [](Graph& g, CaseEnv& e) {  // gemma2/3's local layers
        Tensor* k = e.leaf(GgmlType::F16, {48, 2, 40, 1});
        Tensor* v = e.leaf(GgmlType::F16, {48, 2, 40, 1});
        return g.flash_attn(e.input(g, {48, 4, 9, 1}), k, v, e.mask(g, 40, 9), {.scale = 0.15f, .softcap = 50.0f, .window = 16});
    });
    add("flash_attn/f16/kv_view_of_a_longer_cache", kAttn, [](Graph& g, CaseEnv& e) {  // the model's view of n_kv cells
        Tensor* k = e.leaf(GgmlType::F16, {128, 64, 1, 1});
        Tensor* v = e.leaf(GgmlType::F16, {128, 64, 1, 1});
        Tensor* kv = g.view_3d(k, 64, 2, 33, 64 * k->nb[0], k->nb[1], 0);
        Tensor* vv = g.view_3d(v, 64, 2, 33, 64 * v->nb[0], v->nb[1], 0);
        return g.flash_attn(e.input(g, {64, 4, 3, 1}), kv, vv, e.mask(g, 33, 3), {.scale = 0.125f});
    });
    return cases;
}

// Registers the copy-through device for the harness (a GPU backend's devices come on their own).
class OpHarness : public ::testing::TestWithParam<size_t> {
protected:
    static void SetUpTestSuite() { register_device(make_copy_through_device("TEST0")); }
    static void TearDownTestSuite() { unregister_device("TEST0"); }
};

const std::vector<OpCase>& cases() {
    static const std::vector<OpCase> c = all_cases();
    return c;
}

TEST_P(OpHarness, EveryDeviceMatchesTheCpu) {
    const OpCase& c = cases()[GetParam()];
    const CaseResult ref = run_case(c, cpu_device());
    for (Device* d : gpu_devices()) {
        SCOPED_TRACE(std::string(d->name()) + " " + c.name);
        const CaseResult got = run_case(c, *d);
        ASSERT_EQ(got.values.size(), ref.values.size());
        const double e = nmse(got.values, ref.values);
        EXPECT_LE(e, c.max_nmse) << "nmse " << e;
        if (got.copies) std::cout << "[ observed ] " << d->name() << " " << c.name << ": ran partly on the CPU (" << got.copies << " copies)\n";
    }
}

INSTANTIATE_TEST_SUITE_P(Ops, OpHarness, ::testing::Range<size_t>(0, cases().size()), [](const auto& param) {
    std::string n = cases()[param.param].name;
    for (auto& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
});

// A product's column does not depend on how many columns came with it: on every device,
// column 0 of a 1-, 13- and 40-column product (different kernels on a GPU) has the same bits.
// The inputs are the same numbers: column 0 is the first K of one pseudo-random sequence.
TEST(OpHarnessBits, ProductColumnsDoNotDependOnTheBatch) {
    const std::vector<Device*> devices = gpu_devices();
    if (devices.empty()) GTEST_SKIP() << "no GPU device registered";
    for (Device* d : devices)
        for (GgmlType t : kWeightTypes)
            for (int64_t k : {int64_t{512}, int64_t{67}}) {
                if (k % ggml_type_info(t).block_size != 0) continue;
                std::vector<float> first;
                for (int64_t m : {1, 13, 40}) {
                    const OpCase c{"", 0.0, [=](Graph& g, CaseEnv& e) { return g.mul_mat(e.leaf(t, {k, 20, 1, 1}), e.input(g, {k, m, 1, 1})); }};
                    const CaseResult got = run_case(c, *d);
                    ASSERT_EQ(got.copies, 0u) << d->name() << " " << type_name(t) << " ran partly on the CPU";
                    const std::vector<float> col0(got.values.begin(), got.values.begin() + 20);
                    if (first.empty()) first = col0;
                    EXPECT_EQ(0, std::memcmp(col0.data(), first.data(), 20 * sizeof(float)))
                        << d->name() << " " << type_name(t) << " K " << k << ": " << m << " columns differ from 1";
                }
            }
}

// The harness must be able to fail: a perturbed result is caught by the same measure.
TEST(OpHarnessMeasure, CatchesAWrongElement) {
    std::vector<float> want = random_floats(1000, 7);
    std::vector<float> got = want;
    EXPECT_EQ(nmse(got, want), 0.0);
    got[500] += 0.05f;
    EXPECT_GT(nmse(got, want), 1e-7);
    got[500] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_GT(nmse(got, want), 1.0);
}

}  // namespace
}  // namespace pocket::test
