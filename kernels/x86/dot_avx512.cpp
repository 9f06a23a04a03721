// AVX-512 (F, BW, VL, DQ) + VNNI kernels: 512-bit float lanes, vpdpbusd for the 32-block
// integer dots, and 32 vector registers for the tiles; every type with a dot product.
// GCC 12's own avx512fintrin.h self-initialises "undefined" vectors (__Y = __Y), which
// -Wuninitialized reports at every inlined use; the code is fine, so silence it here only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define POCKET_X86_VNNI 1
#define POCKET_X86_ZMM 1
#include "kernels/float16.hpp"
#include "kernels/x86/simd_x86.inl"
#include "kernels/x86/attn_x86.inl"

namespace pocket::kernels {

void fill_avx512(IsaTable& t) { fill_x86(t); }

// With AMX (x86/amx_32.cpp), whole sixteens of columns go through tiles, the rest here.
template <PackedGemmFn Tiles, PackedGemmFn Zmm>
void amx_then_zmm(int64_t n, const void* packed, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    const int64_t m16 = m / 16 * 16;
    if (m16 > 0) Tiles(n, packed, rows, va, as, m16, c, cs);
    if (m > m16)
        Zmm(n, packed, rows, static_cast<const uint8_t*>(va) + as * static_cast<size_t>(m16), as, m - m16,
            c + cs * static_cast<size_t>(m16), cs);
}

PackedGemmFn q4_0x8_gemm_avx512() { return amx_int8_usable() ? amx_then_zmm<q4_0x8_gemm_amx, q4_0x8_gemm> : q4_0x8_gemm; }
PackedGemmFn q4_Kx8_gemm_avx512() { return q4_Kx8_gemm; }
PackedGemmFn q5_Kx8_gemm_avx512() { return q5_Kx8_gemm; }
PackedGemmFn q6_Kx8_gemm_avx512() { return q6_Kx8_gemm; }
PackedGemmFn q8_0x8_gemm_avx512() { return amx_int8_usable() ? amx_then_zmm<q8_0x8_gemm_amx, q8_0x8_gemm> : q8_0x8_gemm; }
PackedGemmFn iq4_xsx8_gemm_avx512() { return iq4_xsx8_gemm; }
PackedGemmFn q2_Kx8_gemm_avx512() { return q2_Kx8_gemm; }
PackedGemmFn q3_Kx8_gemm_avx512() { return q3_Kx8_gemm; }

QuantizeRowFn quantize_q8_0_avx512() { return quantize_row_q8_0_simd; }
QuantizeRowFn quantize_q8_K_avx512() { return quantize_row_q8_K_simd; }

AttnKernels attn_kernels_avx512() { return {exp_rows_simd, accumulate_simd, swiglu_simd}; }

}  // namespace pocket::kernels
