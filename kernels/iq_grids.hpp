#pragma once
// The i-quants' codebooks, in ggml's byte layout: entry k of a grid holds 8 (IQ3: 4) byte
// levels, byte j being weight j of the group. IQ2 levels are 8, 25, 43; IQ3_XXS levels
// 4..62, IQ3_S odd 1..15; IQ1 levels -1, 0, +1 (int8). Written once as level indices
// (iq_grid_codes.inc) and expanded at compile time; tests check ggml's checksums.
#include <array>
#include <bit>
#include <cstdint>

namespace pocket::kernels {

extern const std::array<uint64_t, 256> kIq2xxsGrid;
extern const std::array<uint64_t, 512> kIq2xsGrid;
extern const std::array<uint64_t, 1024> kIq2sGrid;
extern const std::array<uint32_t, 256> kIq3xxsGrid;
extern const std::array<uint32_t, 512> kIq3sGrid;
extern const std::array<uint64_t, 2048> kIq1sGrid;

// IQ1_S / IQ1_M shift every weight of a group of 8 by +-1/8 of the scale.
inline constexpr float kIq1Delta = 0.125f;

// IQ2_XXS, IQ2_XS and IQ3_XXS store 7 sign bits per 8 weights; the eighth makes the count of
// minus signs even (ggml's ksigns_iq2xs table).
inline constexpr uint8_t iq_signs_from7(uint32_t seven) {
    seven &= 127u;
    return static_cast<uint8_t>(seven | ((std::popcount(seven) & 1u) << 7));
}

// Byte j of a grid entry.
inline constexpr uint8_t grid_byte(uint64_t entry, int j) { return static_cast<uint8_t>(entry >> (8 * j)); }

}  // namespace pocket::kernels
