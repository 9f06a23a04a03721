// The i-quant grids equal ggml's: FNV-1a 64 of each table's bytes (little-endian entries, the
// layout of ggml-common.h's iq2xxs_grid ... iq1s_grid) against the checksums of ggml's own
// tables, computed from ggml-common.h (llama.cpp 3f545becc). A wrong level, index or byte
// order in iq_grid_codes.inc or its expansion changes the sum.
#include "kernels/iq_grids.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace pocket::kernels {
namespace {

template <class Table>
uint64_t fnv1a64(const Table& t) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (auto entry : t)
        for (size_t j = 0; j < sizeof(entry); ++j) {
            h ^= static_cast<uint8_t>(entry >> (8 * j));
            h *= 0x100000001b3ull;
        }
    return h;
}

TEST(IqGrids, ChecksumsEqualGgmlTables) {
    EXPECT_EQ(fnv1a64(kIq2xxsGrid), 0xbb4ee025b5ac6e8eull);
    EXPECT_EQ(fnv1a64(kIq2xsGrid), 0xc9b1ee61e79909bdull);
    EXPECT_EQ(fnv1a64(kIq2sGrid), 0x123edd38a3b62b90ull);
    EXPECT_EQ(fnv1a64(kIq3xxsGrid), 0xdfa5dc83d6a155d5ull);
    EXPECT_EQ(fnv1a64(kIq3sGrid), 0xfa37020c25b44829ull);
    EXPECT_EQ(fnv1a64(kIq1sGrid), 0x6703ed863501ae2eull);
}

// ggml's ksigns_iq2xs: the eighth sign bit keeps the count of minus signs even.
TEST(IqGrids, SignBytesHaveEvenParity) {
    for (uint32_t i = 0; i < 128; ++i) {
        const uint8_t s = iq_signs_from7(i);
        EXPECT_EQ(s & 127u, i);
        EXPECT_EQ(__builtin_popcount(s) % 2, 0) << i;
    }
    EXPECT_EQ(iq_signs_from7(1), 129);
    EXPECT_EQ(iq_signs_from7(3), 3);
}

}  // namespace
}  // namespace pocket::kernels
