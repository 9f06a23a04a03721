#pragma once
// Internal: one table of dot/GEMM entry points per ISA, indexed by ggml type id. Each ISA's
// source file fills the entries it accelerates; the rest keep the scalar reference (all
// ISAs produce identical bits, see dot_order.hpp, so a fallback changes speed only).
#include "kernels/kernels.hpp"

namespace pocket::kernels {

inline constexpr int kMaxTypeId = 40;

struct DotEntry {
    VecDotFn vec_dot = nullptr;
    GemmFn gemm = nullptr;
};

struct IsaTable {
    DotEntry by_type[kMaxTypeId];
    DotEntry& operator[](GgmlType t) { return by_type[static_cast<int>(t)]; }
};

// GEMM by looping vec_dot: the scalar GEMM, and the fallback of SIMD types without a tile.
template <VecDotFn Dot>
void gemm_by_rows(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* a, size_t a_stride, int64_t m,
                  float* c, size_t c_stride) {
    for (int64_t j = 0; j < m; ++j) {
        const auto* aj = static_cast<const char*>(a) + static_cast<size_t>(j) * a_stride;
        for (int64_t i = 0; i < rows; ++i)
            Dot(n, c + static_cast<size_t>(j) * c_stride + static_cast<size_t>(i),
                static_cast<const char*>(w) + static_cast<size_t>(i) * w_stride, aj);
    }
}

void fill_scalar(IsaTable& t);
AttnKernels attn_kernels_scalar();
#if defined(POCKET_KERNELS_X86)
void fill_avx2(IsaTable& t);
void fill_avx512(IsaTable& t);
void fill_avxvnni(IsaTable& t);  // AVX2 + AVX-VNNI
// Q8_0 quantization (the activations of Q4_0 / Q5_0 / Q8_0 products), same bits as the scalar.
QuantizeRowFn quantize_q8_0_avx2();
QuantizeRowFn quantize_q8_0_avx512();
QuantizeRowFn quantize_q8_0_avxvnni();
// Q8_K (the activations of K-quant and IQ4_XS products), same bits as the scalar.
QuantizeRowFn quantize_q8_K_avx2();
QuantizeRowFn quantize_q8_K_avx512();
QuantizeRowFn quantize_q8_K_avxvnni();
// f16 rows (the KV cache) through F16C, same bits as the scalar; AVX2 and AVX-512 alike.
DequantizeRowFn dequantize_f16_f16c();
QuantizeRowFn quantize_f16_f16c();
AttnKernels attn_kernels_avx2();
AttnKernels attn_kernels_avx512();
#endif
#if defined(POCKET_KERNELS_NEON)
void fill_neon(IsaTable& t);
#endif

}  // namespace pocket::kernels
