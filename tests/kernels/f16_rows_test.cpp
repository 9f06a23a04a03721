// The f16 row conversions of every ISA (the KV cache's): bitwise the scalar definitions of
// float16.hpp, on every half and on floats around every rounding boundary; NaN stays NaN.
#include "kernel_test_data.hpp"
#include "kernels/float16.hpp"
#include "kernels/kernels.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <vector>

namespace pocket::kernels {
namespace {

bool same_bits_or_both_nan(float a, float b) {
    return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}
bool same_half_or_both_nan(uint16_t a, uint16_t b) {
    auto nan = [](uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; };
    return a == b || (nan(a) && nan(b));
}

class F16Rows : public ::testing::TestWithParam<Isa> {};

TEST_P(F16Rows, DequantizeEveryHalfAsScalar) {
    const Isa isa = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    test::IsaGuard guard;
    set_active_isa(isa);
    std::vector<uint16_t> h(65536 + 7);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint16_t>(i * 40503u);  // every half, scattered
    std::vector<float> out(h.size(), -1.0f);
    // an odd offset and length: the vector body and the tail
    type_kernels(GgmlType::F16)->dequantize_row(h.data() + 1, out.data() + 1, static_cast<int64_t>(h.size()) - 1);
    for (size_t i = 1; i < h.size(); ++i)
        ASSERT_TRUE(same_bits_or_both_nan(out[i], fp16_to_f32(h[i]))) << isa_name(isa) << " half 0x" << std::hex << h[i];
    EXPECT_EQ(out[0], -1.0f);
}

TEST_P(F16Rows, QuantizeAsScalarAtEveryRoundingBoundary) {
    const Isa isa = GetParam();
    if (!isa_supported(isa)) GTEST_SKIP() << isa_name(isa) << " is not supported by this CPU or build";
    test::IsaGuard guard;
    set_active_isa(isa);
    std::vector<float> x;
    // each half's value, and the floats just below, at and just above the midpoint to the
    // next half (ties to even, the subnormal range, the overflow to infinity)
    for (uint32_t h = 0; h < 0x7C00; ++h) {
        for (float s : {1.0f, -1.0f}) {
            const float a = fp16_to_f32(static_cast<uint16_t>(h)), b = fp16_to_f32(static_cast<uint16_t>(h + 1));
            const float mid = a + (b - a) / 2;
            x.insert(x.end(), {s * a, s * std::nextafter(mid, 0.0f), s * mid, s * std::nextafter(mid, 1e30f)});
        }
    }
    std::mt19937 rng(11);
    for (int i = 0; i < 100000; ++i) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));  // NaNs and infinities too
    x.push_back(7.0f);  // an odd length: a tail
    std::vector<uint16_t> out(x.size());
    type_kernels(GgmlType::F16)->quantize_row(x.data(), out.data(), static_cast<int64_t>(x.size()), nullptr);
    for (size_t i = 0; i < x.size(); ++i)
        ASSERT_TRUE(same_half_or_both_nan(out[i], f32_to_fp16(x[i]))) << isa_name(isa) << " " << x[i] << " (0x" << std::hex
                                                                     << std::bit_cast<uint32_t>(x[i]) << ")";
}

INSTANTIATE_TEST_SUITE_P(AllIsas, F16Rows, ::testing::Values(Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::neon),
                         [](const ::testing::TestParamInfo<Isa>& p) { return std::string(isa_name(p.param)); });

}  // namespace
}  // namespace pocket::kernels
