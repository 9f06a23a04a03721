// AVX2 + FMA + F16C kernels (Haswell and later, Zen), for every type with a dot product.
#define POCKET_X86_VNNI 0
#define POCKET_X86_ZMM 0
#include "kernels/float16.hpp"
#include "kernels/x86/simd_x86.inl"
#include "kernels/x86/attn_x86.inl"
#include "kernels/x86/convert_x86.inl"

namespace pocket::kernels {

void fill_avx2(IsaTable& t) { fill_x86(t); }

PackedGemmFn q4_0x8_gemm_avx2() { return q4_0x8_gemm; }
PackedGemmFn q4_Kx8_gemm_avx2() { return q4_Kx8_gemm; }
PackedGemmFn q5_Kx8_gemm_avx2() { return q5_Kx8_gemm; }
PackedGemmFn q6_Kx8_gemm_avx2() { return q6_Kx8_gemm; }
PackedGemmFn q8_0x8_gemm_avx2() { return q8_0x8_gemm; }
PackedGemmFn iq4_xsx8_gemm_avx2() { return iq4_xsx8_gemm; }
PackedGemmFn q2_Kx8_gemm_avx2() { return q2_Kx8_gemm; }
PackedGemmFn q3_Kx8_gemm_avx2() { return q3_Kx8_gemm; }

QuantizeRowFn quantize_q8_0_avx2() { return quantize_row_q8_0_simd; }
QuantizeRowFn quantize_q8_K_avx2() { return quantize_row_q8_K_simd; }
DequantizeRowFn dequantize_f16_f16c() { return dequantize_row_f16_f16c; }
QuantizeRowFn quantize_f16_f16c() { return quantize_row_f16_f16c; }

AttnKernels attn_kernels_avx2() { return {exp_rows_simd, accumulate_simd, swiglu_simd}; }

}  // namespace pocket::kernels
