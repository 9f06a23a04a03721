// Dequantization is bitwise equal to llama.cpp's on shared/reference/e_dequant: the tensor
// blk.0.attn_k.weight (ne = [256, 128]) in 24 types, raw bytes and ggml's to_float output.
#include "kernel_test_data.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace pocket::kernels {
namespace {

constexpr int64_t kRowLen = 256;

class DequantizeReference : public ::testing::TestWithParam<test::RefType> {};

TEST_P(DequantizeReference, BitwiseEqualToLlamaCpp) {
    POCKET_KERNELS_REQUIRE_SHARED(shared);
    const auto dir = shared / "reference" / "e_dequant";
    const std::string stem = std::string(GetParam().file_name) + ".blk.0.attn_k.weight";
    const auto raw = test::read_bytes(dir / (stem + ".raw"));
    const auto expected = test::read_floats(dir / (stem + ".dequant.f32"));
    ASSERT_FALSE(raw.empty()) << "missing " << stem << ".raw";
    const int64_t rows = static_cast<int64_t>(expected.size()) / kRowLen;
    const size_t rb = test::row_bytes(GetParam().type, kRowLen);
    ASSERT_EQ(raw.size(), rb * static_cast<size_t>(rows));

    std::vector<float> got(expected.size());
    for (int64_t r = 0; r < rows; ++r) dequantize_row(GetParam().type, raw.data() + rb * r, got.data() + kRowLen * r, kRowLen);
    int mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::memcmp(&got[i], &expected[i], sizeof(float)) != 0 && ++mismatches <= 5)
            ADD_FAILURE() << "element " << i << ": got " << got[i] << ", llama.cpp " << expected[i];
    }
    EXPECT_EQ(mismatches, 0);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DequantizeReference, ::testing::ValuesIn(test::kRefTypes),
                         [](const auto& p) { return std::string(p.param.file_name); });
INSTANTIATE_TEST_SUITE_P(LowBitTypes, DequantizeReference, ::testing::ValuesIn(test::kLowBitRefTypes),
                         [](const auto& p) { return std::string(p.param.file_name); });

}  // namespace
}  // namespace pocket::kernels
