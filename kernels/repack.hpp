#pragma once
// Internal: the row-interleaved Q4_0 layout. Eight rows' blocks b sit together: their
// scales, then their 16 nibble bytes each, so one 144-byte record holds block b of rows
// 8g .. 8g+7 (the same bytes as the eight original blocks, reordered).
#include "kernels/blocks.hpp"
#include "kernels/kernels.hpp"

namespace pocket::kernels {

inline constexpr int kQ4_0x8Rows = 8;

struct block_q4_0x8 {
    half d[kQ4_0x8Rows];
    uint8_t qs[kQ4_0x8Rows][kQK / 2];
};
static_assert(sizeof(block_q4_0x8) == kQ4_0x8Rows * sizeof(block_q4_0), "repacking must not change the size");

using PackedGemmFn = void (*)(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m,
                              float* c, size_t c_stride);

size_t q4_0x8_packed_bytes(int64_t rows, int64_t n);
void q4_0x8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q4_0x8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);
#if defined(POCKET_KERNELS_X86)
PackedGemmFn q4_0x8_gemm_avx2();
PackedGemmFn q4_0x8_gemm_avx512();
#endif

}  // namespace pocket::kernels
