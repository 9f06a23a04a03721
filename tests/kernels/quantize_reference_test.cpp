// Quantization of the F32 source of e_dequant: byte-identical to llama-quantize's output
// where ggml's algorithm is deterministic (all 14 types here, no imatrix), and in any case
// a round-trip RMSE no worse than llama.cpp's.
#include "kernel_test_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace pocket::kernels {
namespace {

constexpr int64_t kRowLen = 256;

double rmse(const std::vector<float>& a, const std::vector<float>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    return std::sqrt(s / static_cast<double>(a.size()));
}

std::vector<float> dequantize_all(GgmlType t, const std::vector<uint8_t>& q, int64_t rows) {
    std::vector<float> out(static_cast<size_t>(rows * kRowLen));
    const size_t rb = test::row_bytes(t, kRowLen);
    for (int64_t r = 0; r < rows; ++r) dequantize_row(t, q.data() + rb * r, out.data() + kRowLen * r, kRowLen);
    return out;
}

class QuantizeReference : public ::testing::TestWithParam<test::RefType> {};

TEST_P(QuantizeReference, BytesAndRmseMatchLlamaCpp) {
    POCKET_KERNELS_REQUIRE_SHARED(shared);
    const auto dir = shared / "reference" / "e_dequant";
    const GgmlType type = GetParam().type;
    const auto source = test::read_floats(dir / "source_f32.blk.0.attn_k.weight.f32");
    const auto raw = test::read_bytes(dir / (std::string(GetParam().file_name) + ".blk.0.attn_k.weight.raw"));
    ASSERT_EQ(source.size() % kRowLen, 0u);
    const int64_t rows = static_cast<int64_t>(source.size()) / kRowLen;

    // the "A" rows of MANIFEST section e were quantized with this importance vector
    std::vector<float> imatrix;
    if (GetParam().imatrix) {
        imatrix = test::read_floats(dir / "imatrix.blk.0.attn_k.weight.f32");
        ASSERT_EQ(imatrix.size(), static_cast<size_t>(kRowLen));
    }
    if (!type_kernels(type)->quantize_row) GTEST_SKIP() << "pocket cannot quantize " << GetParam().file_name << " yet";
    std::vector<uint8_t> mine(test::row_bytes(type, kRowLen) * static_cast<size_t>(rows));
    quantize_rows(type, source.data(), mine.data(), rows, kRowLen, imatrix.empty() ? nullptr : imatrix.data());
    ASSERT_EQ(mine.size(), raw.size());

    const double rmse_llama = rmse(dequantize_all(type, raw, rows), source);
    const double rmse_mine = rmse(dequantize_all(type, mine, rows), source);
    size_t differing = 0;
    for (size_t i = 0; i < mine.size(); ++i) differing += mine[i] != raw[i];
    std::printf("[ RMSE     ] %-6s pocket %.9g  llama.cpp %.9g  differing bytes %zu / %zu\n", GetParam().file_name,
                rmse_mine, rmse_llama, differing, mine.size());
    RecordProperty("rmse_pocket", std::to_string(rmse_mine));
    RecordProperty("rmse_llama_cpp", std::to_string(rmse_llama));
    EXPECT_LE(rmse_mine, rmse_llama * (1 + 1e-6));
    EXPECT_EQ(differing, 0u) << "ggml's algorithm is deterministic: the bytes should be llama-quantize's";
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantizeReference, ::testing::ValuesIn(test::kRefTypes),
                         [](const auto& p) { return std::string(p.param.file_name); });
INSTANTIATE_TEST_SUITE_P(LowBitTypes, QuantizeReference, ::testing::ValuesIn(test::kLowBitRefTypes),
                         [](const auto& p) { return std::string(p.param.file_name); });

// With an importance matrix Q4_0 … Q5_1, the K-quants and IQ4 types weight the rounding error: the
// weighted error must not be worse than without one (a weak property, but it fails when
// the imatrix is ignored or misapplied), and a uniform imatrix must stay close.
class QuantizeImatrix : public ::testing::TestWithParam<GgmlType> {};

TEST_P(QuantizeImatrix, ImportanceLowersWeightedError) {
    const GgmlType type = GetParam();
    constexpr int64_t n = 1024, rows = 16;
    std::mt19937 rng(11);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> src(static_cast<size_t>(n * rows)), imatrix(static_cast<size_t>(n));
    for (auto& v : src) v = g(rng);
    for (size_t i = 0; i < imatrix.size(); ++i) imatrix[i] = (i % 7 == 0) ? 50.f : 0.1f;

    std::vector<uint8_t> plain(test::row_bytes(type, n) * rows), weighted(plain.size());
    quantize_rows(type, src.data(), plain.data(), rows, n);
    quantize_rows(type, src.data(), weighted.data(), rows, n, imatrix.data());
    auto weighted_err = [&](const std::vector<uint8_t>& q) {
        std::vector<float> back(static_cast<size_t>(n));
        double e = 0;
        for (int64_t r = 0; r < rows; ++r) {
            dequantize_row(type, q.data() + test::row_bytes(type, n) * r, back.data(), n);
            for (int64_t i = 0; i < n; ++i) {
                const double d = back[static_cast<size_t>(i)] - src[static_cast<size_t>(r * n + i)];
                e += imatrix[static_cast<size_t>(i)] * d * d;
            }
        }
        return e;
    };
    EXPECT_LT(weighted_err(weighted), weighted_err(plain));
}

INSTANTIATE_TEST_SUITE_P(WeightedTypes, QuantizeImatrix,
                         ::testing::Values(GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                                           GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K,
                                           GgmlType::Q6_K, GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const auto& p) { return std::string(test::type_name(p.param)); });

}  // namespace
}  // namespace pocket::kernels
