// AVX2 + AVX-VNNI kernels (Alder Lake and later Intel client cores, Zen 5): the AVX2 kernels
// with vpdpbusd / vpdpwssd in ymm for the integer dots, the commonest x86 without AVX-512.
#define POCKET_X86_VNNI 1
#define POCKET_X86_ZMM 0
#include "kernels/float16.hpp"
#include "kernels/x86/simd_x86.inl"

namespace pocket::kernels {

void fill_avxvnni(IsaTable& t) { fill_x86(t); }

PackedGemmFn q4_0x8_gemm_avxvnni() { return q4_0x8_gemm; }
PackedGemmFn q4_Kx8_gemm_avxvnni() { return q4_Kx8_gemm; }
PackedGemmFn q5_Kx8_gemm_avxvnni() { return q5_Kx8_gemm; }
PackedGemmFn q6_Kx8_gemm_avxvnni() { return q6_Kx8_gemm; }
PackedGemmFn q8_0x8_gemm_avxvnni() { return q8_0x8_gemm; }
PackedGemmFn iq4_xsx8_gemm_avxvnni() { return iq4_xsx8_gemm; }
PackedGemmFn q2_Kx8_gemm_avxvnni() { return q2_Kx8_gemm; }
PackedGemmFn q3_Kx8_gemm_avxvnni() { return q3_Kx8_gemm; }

QuantizeRowFn quantize_q8_0_avxvnni() { return quantize_row_q8_0_simd; }
QuantizeRowFn quantize_q8_K_avxvnni() { return quantize_row_q8_K_simd; }

}  // namespace pocket::kernels
