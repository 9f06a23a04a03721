// rand-llama-f32.gguf quantized by pocket, against what llama-quantize made of it
// (shared/reference/models/rand-llama-{pure,mix}-*.gguf): the tensor bytes, and the logits of
// pocket's file against llama.cpp's logits for its own file (MANIFEST "Tolerances to test with").
#include "pocket/context.hpp"
#include "pocket/model.hpp"
#include "pocket/quantize.hpp"
#include "quantize_test_util.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

struct Case {
    const char* file;   // rand-llama-<file>.gguf and its logits
    const char* type;
    bool pure;
    double bound;
};

constexpr Case kCases[] = {
    {"pure-q4_0", "Q4_0", true, 0.1},     {"pure-q4_1", "Q4_1", true, 0.1},     {"pure-q5_0", "Q5_0", true, 0.1},
    {"pure-q5_1", "Q5_1", true, 0.1},     {"pure-q8_0", "Q8_0", true, 0.1},     {"pure-q2_k", "Q2_K", true, 0.1},
    {"pure-q3_k_m", "Q3_K_M", true, 0.1}, {"pure-q4_k_m", "Q4_K_M", true, 0.1}, {"pure-q5_k_m", "Q5_K_M", true, 0.1},
    {"pure-q6_k", "Q6_K", true, 0.1},     {"pure-f16", "F16", true, 3e-3},      {"pure-bf16", "BF16", true, 0.02},
    {"mix-q3_k_m", "Q3_K_M", false, 0.1}, {"mix-q4_k_s", "Q4_K_S", false, 0.1}, {"mix-q4_k_m", "Q4_K_M", false, 0.1},
    {"mix-q5_k_m", "Q5_K_M", false, 0.1},
};

class QuantizedLogits : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(QuantizedLogits, MatchLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    const Case& c = GetParam();
    const fs::path ref = shared / "reference";
    test::ScratchDir dir;
    const auto out = dir / "out.gguf";
    QuantizeOptions o{.n_threads = 2, .pure = c.pure};
    quantize_model((ref / "models" / "rand-llama-f32.gguf").string(), out.string(), *find_quant_file_type(c.type), o);

    // Tensor by tensor against llama-quantize's file.
    const GgufFile mine = GgufFile::open(out.string());
    const GgufFile theirs = GgufFile::open((ref / "models" / (std::string("rand-llama-") + c.file + ".gguf")).string());
    EXPECT_EQ(mine.get<uint32_t>("general.file_type"), theirs.get<uint32_t>("general.file_type"));
    ASSERT_EQ(mine.tensors().size(), theirs.tensors().size());
    size_t identical = 0;
    for (const auto& t : theirs.tensors()) {
        const GgufTensorInfo* m = mine.find_tensor(t.name);
        ASSERT_NE(m, nullptr) << t.name;
        EXPECT_EQ(ggml_type_info(m->type).name, ggml_type_info(t.type).name) << t.name;
        const bool same = m->n_bytes == t.n_bytes && std::memcmp(m->data, t.data, t.n_bytes) == 0;
        EXPECT_TRUE(same) << t.name << " differs from llama-quantize's";
        identical += same;
    }
    std::cout << "[ observed ] " << c.file << ": " << identical << "/" << theirs.tensors().size()
              << " tensors byte-identical to llama-quantize's\n";
    // The whole file too (metadata order, padding, tensor table): `cmp` would say the same.
    const auto mine_bytes = test::read_file(out);
    const auto theirs_bytes = test::read_file(ref / "models" / (std::string("rand-llama-") + c.file + ".gguf"));
    EXPECT_TRUE(mine_bytes == theirs_bytes) << c.file << ": the file is not byte-identical to llama-quantize's";

    // Logits of pocket's file against llama.cpp's of its own file (kv f32).
    std::ifstream tin(ref / "tokens" / "seq64.json");
    const auto tokens = nlohmann::json::parse(tin).get<std::vector<TokenId>>();
    auto model = Model::load(out.string());
    const uint32_t n_vocab = model->hparams().n_vocab;
    Context ctx(*model, {.n_ctx = 256, .n_threads = 2, .type_k = GgmlType::F32, .type_v = GgmlType::F32});
    ctx.decode(tokens, /*all_logits=*/true);
    const auto expected = test::read_f32(ref / "b_quant" / (std::string("rand-llama-") + c.file + ".seq64.kv_f32.logits.f32"));
    ASSERT_EQ(expected.size(), tokens.size() * n_vocab);
    double worst = 0;
    for (size_t r = 0; r < tokens.size(); ++r) {
        const auto got = ctx.logits(r);
        for (size_t i = 0; i < n_vocab; ++i) worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - expected[r * n_vocab + i]));
    }
    std::cout << "[ observed ] " << c.file << ": max |delta logit| = " << worst << " (bound " << c.bound << ")\n";
    RecordProperty("max_abs", std::to_string(worst));
    EXPECT_LE(worst, c.bound);
}

INSTANTIATE_TEST_SUITE_P(RandLlama, QuantizedLogits, ::testing::ValuesIn(kCases), [](const auto& tp) {
    std::string n = tp.param.file;
    for (auto& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return n;
});
