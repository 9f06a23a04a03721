// AVX2 + FMA + F16C kernels (Haswell and later, Zen). Types not set in simd_x86.inl keep
// the scalar reference: Q2_K, Q3_K, IQ4_XS.
#define POCKET_X86_VNNI 0
#define POCKET_X86_ZMM 0
#include "kernels/float16.hpp"
#include "kernels/x86/simd_x86.inl"

namespace pocket::kernels {

void fill_avx2(IsaTable& t) { fill_x86(t); }

}  // namespace pocket::kernels
