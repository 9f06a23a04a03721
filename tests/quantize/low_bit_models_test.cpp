// The i-quant, ternary and MXFP4 mixes end to end: pocket quantizes synth-8l (with
// llama-imatrix's importance matrix where llama-quantize needs one), loads the file and runs
// it. Its logits stay near those of the same weights dequantized to F32 (`quantize
// --allow-requantize ... F32`: the dequantizers are bitwise llama.cpp's), so what is left is
// the activations' rounding to Q8_K / Q8_0; and they are bitwise the same whether the prompt
// is one batch or token by token, on 1 or 2 threads (the types' GEMM tiles equal their dots).
// A model whose types a GPU cannot decode keeps those weights on the CPU.
#include "pocket/context.hpp"
#include "pocket/device.hpp"
#include "pocket/model.hpp"
#include "pocket/quantize.hpp"
#include "quantize_test_util.hpp"
#include "reference_cases.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace pocket;

namespace {

struct Mix {
    const char* type;
    bool imatrix;  // llama-quantize refuses these without one (or the reference used one)
};

constexpr Mix kMixes[] = {
    {"IQ1_S", true},  {"IQ1_M", true},  {"IQ2_XXS", true}, {"IQ2_XS", true}, {"IQ2_S", true},
    {"IQ2_M", true},  {"IQ3_XXS", true}, {"IQ3_XS", true}, {"IQ3_S", false}, {"IQ3_M", false},
    {"TQ1_0", false}, {"TQ2_0", false}, {"MXFP4_MOE", false},
};

// Normalised squared error of the logits, sum (got - want)^2 / sum want^2. Against the
// dequantized weights only the activations' 8-bit rounding remains (observed below 1e-3);
// a wrong level, sign or scale in a dot product gives far more (against F16, where the
// weights' own rounding counts, these 1- to 3-bit types on random weights show 0.1 to 1.7).
constexpr double kBoundVsDequantized = 0.01;

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
    double err = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        err += (got[i] - static_cast<double>(want[i])) * (got[i] - static_cast<double>(want[i]));
        norm += static_cast<double>(want[i]) * want[i];
    }
    return err / norm;
}

std::vector<TokenId> prompt() {
    std::vector<TokenId> t(48);
    for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<TokenId>(1 + (i * 37) % 500);
    return t;
}

// All logits of the prompt: in one decode call, or token by token.
std::vector<float> logits_of(const Model& model, int n_threads, bool one_by_one) {
    Context ctx(model, {.n_ctx = 128, .n_threads = n_threads, .type_k = GgmlType::F32, .type_v = GgmlType::F32});
    const auto tokens = prompt();
    const uint32_t n_vocab = model.hparams().n_vocab;
    std::vector<float> out;
    if (!one_by_one) {
        ctx.decode(tokens, /*all_logits=*/true);
        for (size_t r = 0; r < tokens.size(); ++r) {
            const auto l = ctx.logits(r);
            out.insert(out.end(), l.begin(), l.begin() + n_vocab);
        }
    } else {
        for (TokenId t : tokens) {
            ctx.decode(std::vector<TokenId>{t}, true);
            const auto l = ctx.logits(0);
            out.insert(out.end(), l.begin(), l.begin() + n_vocab);
        }
    }
    return out;
}

std::string quantized(const Mix& m, const test::ScratchDir& dir) {
    const auto in = test::f_quantize_dir() / "synth-8l-f16.gguf";
    const auto out = dir / (std::string(m.type) + ".gguf");
    std::optional<Imatrix> imatrix;
    QuantizeOptions o{.n_threads = 2};
    if (m.imatrix) {
        imatrix = load_imatrix((test::f_quantize_dir() / "synth-8l.imatrix.gguf").string());
        o.imatrix = &*imatrix;
    }
    // MXFP4_MOE puts only expert (3-D) matrices in MXFP4; this dense model needs --pure for any
    o.pure = std::string(m.type) == "MXFP4_MOE";
    quantize_model(in.string(), out.string(), *find_quant_file_type(m.type), o);
    return out.string();
}

class LowBitModel : public ::testing::TestWithParam<Mix> {};

}  // namespace

TEST_P(LowBitModel, RunsNearF16AndAlikeForAnyBatchOrThreadCount) {
    POCKET_REQUIRE_SHARED(shared);
    const Mix& m = GetParam();
    test::ScratchDir dir;
    const std::string path = quantized(m, dir);
    const auto dequantized = dir / "dequantized-f32.gguf";
    quantize_model(path, dequantized.string(), *find_quant_file_type("F32"), {.n_threads = 2, .allow_requantize = true});
    auto model = Model::load(path);
    const auto got = logits_of(*model, 2, false);
    for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(std::isfinite(got[i])) << i;
    const auto want = logits_of(*Model::load(dequantized.string()), 2, false);
    const auto f16 = logits_of(*Model::load((test::f_quantize_dir() / "synth-8l-f16.gguf").string()), 2, false);
    ASSERT_EQ(got.size(), want.size());
    std::cout << "[ observed ] " << m.type << ": nmse vs its weights in F32 = " << nmse(got, want) << " (bound "
              << kBoundVsDequantized << "), vs the F16 source = " << nmse(got, f16) << "\n";
    EXPECT_LE(nmse(got, want), kBoundVsDequantized);

    for (auto [threads, one_by_one] : {std::pair{1, false}, std::pair{2, true}}) {
        const auto again = logits_of(*model, threads, one_by_one);
        ASSERT_EQ(again.size(), got.size());
        EXPECT_EQ(std::memcmp(again.data(), got.data(), got.size() * sizeof(float)), 0)
            << m.type << ": -t " << threads << (one_by_one ? ", token by token" : ", one batch") << " differs";
    }
}

INSTANTIATE_TEST_SUITE_P(Synth8l, LowBitModel, ::testing::ValuesIn(kMixes), [](const auto& p) { return std::string(p.param.type); });

// With every layer on a GPU whose kernels cannot decode IQ2_XXS (Vulkan today), those weights
// stay on the CPU, and the model runs.
TEST(LowBitModelOnGpu, TypesTheGpuCannotReadStayOnTheCpu) {
    POCKET_REQUIRE_SHARED(shared);
    Device* gpu = nullptr;
    for (Device* d : gpu_devices())
        if (!d->holds_weight_type(GgmlType::IQ2_XXS)) gpu = d;
    if (!gpu) GTEST_SKIP() << "no GPU device that lacks IQ2_XXS kernels";
    test::ScratchDir dir;
    const std::string path = quantized(kMixes[2], dir);
    auto model = Model::load(path, {.gpu_layers = GpuLayers::all(), .device = std::string(gpu->name())});
    const auto& devices = model->placement().devices;
    ASSERT_EQ(devices.size(), 2u);
    const GgufFile file = GgufFile::open(path);
    uint64_t iq2_bytes = 0;
    for (const auto& t : file.tensors())
        if (t.type == GgmlType::IQ2_XXS) iq2_bytes += t.n_bytes;
    ASSERT_GT(iq2_bytes, 0u);
    EXPECT_GE(model->weight_bytes_on(1), iq2_bytes);  // the CPU, last
    EXPECT_GT(model->weight_bytes_on(0), 0u);          // the rest (q2_K, iq4_nl, q5_K ...) on the GPU
    EXPECT_NE(model->placement().summary.find("iq2_xxs weights stay on the CPU"), std::string::npos)
        << model->placement().summary;
    const auto got = logits_of(*model, 2, false);
    for (float v : got) ASSERT_TRUE(std::isfinite(v));
}
