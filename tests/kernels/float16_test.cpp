// fp16/bf16 conversions: every half round-trips; f32 -> f16 rounds to nearest even,
// checked against the compiler's own _Float16 conversion where it has one.
#include "kernels/float16.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

namespace pocket::kernels {
namespace {

TEST(Float16, EveryHalfRoundTrips) {
    for (uint32_t h = 0; h < 65536; ++h) {
        const float f = fp16_to_f32(static_cast<uint16_t>(h));
        if (std::isnan(f)) continue;
        EXPECT_EQ(f32_to_fp16(f), h) << "half 0x" << std::hex << h;
    }
}

TEST(Float16, RoundsToNearestEven) {
    // 1 + 2^-11 is halfway between 1 and the next half: ties go to the even mantissa (1).
    EXPECT_EQ(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
    EXPECT_EQ(f32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
    EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);  // rounds to infinity
    EXPECT_EQ(f32_to_fp16(65519.0f), 0x7BFF);
    EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal: to even
    EXPECT_EQ(f32_to_fp16(std::ldexp(1.5f, -25)), 0x0001);
}

#if defined(__aarch64__)
using CompilerHalf = __fp16;  // ARM's storage type; conversions round to nearest even
#define POCKET_HAVE_COMPILER_HALF 1
#elif defined(__FLT16_MAX__) && (defined(__x86_64__) || defined(__i386__))
using CompilerHalf = _Float16;
#define POCKET_HAVE_COMPILER_HALF 1
#endif

#if defined(POCKET_HAVE_COMPILER_HALF)
TEST(Float16, MatchesCompilerConversionOnRandomFloats) {
    std::mt19937 rng(7);
    for (int i = 0; i < 2000000; ++i) {
        const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
        if (std::isnan(f)) continue;
        const CompilerHalf ref = static_cast<CompilerHalf>(f);
        ASSERT_EQ(f32_to_fp16(f), std::bit_cast<uint16_t>(ref)) << f;
    }
}
#endif

TEST(BFloat16, RoundsToNearestEven) {
    EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even stays
    EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, odd rounds up
    EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
}

}  // namespace
}  // namespace pocket::kernels
