// Per-tensor type choice and general.file_type against llama-quantize's, for every type of
// shared/reference/f_quantize, with and without the imatrix (the plan only: no bytes).
#include "pocket/error.hpp"
#include "pocket/quantize.hpp"
#include "reference_cases.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace pocket;
using nlohmann::ordered_json;

namespace {

const std::vector<test::FQuantizeCase>& cases() {
    static const auto c = test::f_quantize_cases();
    return c;
}

std::vector<size_t> indices() {
    std::vector<size_t> idx(std::max<size_t>(cases().size(), 1));
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    return idx;
}

class TypeChoice : public ::testing::TestWithParam<size_t> {};

}  // namespace

TEST_P(TypeChoice, EqualsLlamaQuantize) {
    if (cases().empty()) GTEST_SKIP() << "shared reference data not found (set POCKET_SHARED)";
    const auto& c = cases()[GetParam()];
    std::ifstream in(c.types_json);
    const ordered_json expected = ordered_json::parse(in);

    const GgufFile model = GgufFile::open((test::f_quantize_dir() / "synth-8l-f16.gguf").string());
    std::optional<Imatrix> imatrix;
    QuantizeOptions o;
    if (c.imatrix) {
        imatrix = load_imatrix((test::f_quantize_dir() / "synth-8l.imatrix.gguf").string());
        o.imatrix = &*imatrix;
    }
    const QuantFileType* ft = find_quant_file_type(c.type);
    ASSERT_NE(ft, nullptr) << c.type;
    const QuantizePlan plan = plan_quantization(model, *ft, o);
    EXPECT_EQ(plan.file_type, expected["general.file_type"].get<uint32_t>());

    // Same tensors, in the same order, with the same types.
    const auto& tensors = expected["tensors"];
    ASSERT_EQ(plan.tensors.size(), tensors.size());
    size_t i = 0;
    for (const auto& [name, type] : tensors.items()) {
        const TensorPlan& p = plan.tensors[i++];
        EXPECT_EQ(p.name, name);
        const auto t = ggml_type_from_name(type.get<std::string>());
        ASSERT_TRUE(t) << type;
        EXPECT_EQ(ggml_type_info(p.to).name, ggml_type_info(*t).name) << name;
    }
}

INSTANTIATE_TEST_SUITE_P(FQuantize, TypeChoice, ::testing::ValuesIn(indices()), [](const auto& tp) {
    return cases().empty() ? std::string("shared_data_absent") : cases()[tp.param].label();
});

// llama-quantize refuses Q2_K_S and the 1- and 2-bit i-quant mixes (and IQ3_XXS) without an
// imatrix (their matrices would be garbage); IQ3_S, IQ3_M and the ternary types need none.
TEST(TypeChoiceRules, VeryLowBitTypesNeedAnImatrix) {
    POCKET_REQUIRE_SHARED(shared);
    const GgufFile model = GgufFile::open((test::f_quantize_dir() / "synth-8l-f16.gguf").string());
    for (const char* type : {"Q2_K_S", "IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_S", "IQ2_M", "IQ3_XXS", "IQ3_XS"}) {
        try {
            plan_quantization(model, *find_quant_file_type(type), {});
            ADD_FAILURE() << type << ": no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("needs an importance matrix (--imatrix)"), std::string::npos) << e.what();
        }
    }
    for (const char* type : {"IQ3_S", "IQ3_M", "TQ1_0", "TQ2_0", "MXFP4_MOE"})
        EXPECT_NO_THROW(plan_quantization(model, *find_quant_file_type(type), {})) << type;
}

TEST(TypeChoiceRules, PureGivesEveryMatrixTheBaseType) {
    POCKET_REQUIRE_SHARED(shared);
    const GgufFile model = GgufFile::open((shared / "reference" / "models" / "rand-llama-f32.gguf").string());
    const QuantizePlan plan = plan_quantization(model, *find_quant_file_type("Q4_K_M"), {.pure = true});
    for (const auto& p : plan.tensors) {
        const bool matrix = p.ne[1] > 1;
        EXPECT_EQ(p.to, matrix ? GgmlType::Q4_K : GgmlType::F32) << p.name;
    }
}

TEST(TypeChoiceRules, OverridesAndLeaveOutput) {
    POCKET_REQUIRE_SHARED(shared);
    const GgufFile model = GgufFile::open((shared / "reference" / "models" / "rand-llama-f32.gguf").string());
    QuantizeOptions o;
    o.output_tensor_type = GgmlType::Q8_0;
    o.token_embedding_type = GgmlType::F16;
    auto plan = plan_quantization(model, *find_quant_file_type("Q4_0"), o);
    for (const auto& p : plan.tensors) {
        if (p.name == "output.weight") {
            EXPECT_EQ(p.to, GgmlType::Q8_0);
        }
        if (p.name == "token_embd.weight") {
            EXPECT_EQ(p.to, GgmlType::F16);
        }
    }
    plan = plan_quantization(model, *find_quant_file_type("Q4_0"), {.leave_output_tensor = true});
    for (const auto& p : plan.tensors) {
        if (p.name == "output.weight") {
            EXPECT_EQ(p.to, GgmlType::F32);
        }
    }
}

TEST(TypeChoiceRules, TypeNames) {
    EXPECT_EQ(find_quant_file_type("q4_k_m")->id, 15u);
    EXPECT_EQ(find_quant_file_type("Q4_K")->name, "Q4_K_M");
    EXPECT_EQ(find_quant_file_type("15")->name, "Q4_K_M");
    EXPECT_EQ(find_quant_file_type("0")->name, "F32");
    EXPECT_TRUE(find_quant_file_type("COPY")->copy);
    EXPECT_EQ(find_quant_file_type("Q4_2"), nullptr);
    EXPECT_EQ(find_quant_file_type(""), nullptr);
}
