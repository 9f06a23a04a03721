// Flash attention's inner steps for one x86 ISA (included by dot_avx2.cpp / dot_avx512.cpp
// after simd_x86.inl): 8 float lanes with AVX2, 16 with AVX-512. Lane by lane the same
// operations as kernels/attn_math.hpp, and a tail through the scalar definition itself.
#include "kernels/attn_math.hpp"

namespace pocket::kernels {
namespace {

#if POCKET_X86_ZMM
using VF = __m512;
using VI = __m512i;
constexpr int kLanes = 16;
inline VF vload(const float* p) { return _mm512_loadu_ps(p); }
inline void vstore(float* p, VF v) { _mm512_storeu_ps(p, v); }
inline VF vset1(float x) { return _mm512_set1_ps(x); }
inline VF vfma(VF a, VF b, VF c) { return _mm512_fmadd_ps(a, b, c); }
inline VF vmax(VF a, VF b) { return _mm512_max_ps(a, b); }
inline VF vmin(VF a, VF b) { return _mm512_min_ps(a, b); }
inline VF vsub(VF a, VF b) { return _mm512_sub_ps(a, b); }
inline VF vmul(VF a, VF b) { return _mm512_mul_ps(a, b); }
inline VF vadd(VF a, VF b) { return _mm512_add_ps(a, b); }
inline VF vdiv(VF a, VF b) { return _mm512_div_ps(a, b); }
inline VF vneg(VF a) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_set1_epi32(INT32_MIN))); }
inline VI vbits(VF a) { return _mm512_castps_si512(a); }
inline VF vfloat(VI a) { return _mm512_castsi512_ps(a); }
inline VI vsub_i(VI a, VI b) { return _mm512_sub_epi32(a, b); }
inline VI vadd_i(VI a, VI b) { return _mm512_add_epi32(a, b); }
inline VI vset1_i(int32_t x) { return _mm512_set1_epi32(x); }
inline VI vshl23(VI a) { return _mm512_slli_epi32(a, 23); }
inline VF vzero_below(VF x, float lo, VF y) {  // x < lo ? 0 : y
    return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(lo), _CMP_NLT_UQ), y);
}
#else
using VF = __m256;
using VI = __m256i;
constexpr int kLanes = 8;
inline VF vload(const float* p) { return _mm256_loadu_ps(p); }
inline void vstore(float* p, VF v) { _mm256_storeu_ps(p, v); }
inline VF vset1(float x) { return _mm256_set1_ps(x); }
inline VF vfma(VF a, VF b, VF c) { return _mm256_fmadd_ps(a, b, c); }
inline VF vmax(VF a, VF b) { return _mm256_max_ps(a, b); }
inline VF vmin(VF a, VF b) { return _mm256_min_ps(a, b); }
inline VF vsub(VF a, VF b) { return _mm256_sub_ps(a, b); }
inline VF vmul(VF a, VF b) { return _mm256_mul_ps(a, b); }
inline VF vadd(VF a, VF b) { return _mm256_add_ps(a, b); }
inline VF vdiv(VF a, VF b) { return _mm256_div_ps(a, b); }
inline VF vneg(VF a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
inline VI vbits(VF a) { return _mm256_castps_si256(a); }
inline VF vfloat(VI a) { return _mm256_castsi256_ps(a); }
inline VI vsub_i(VI a, VI b) { return _mm256_sub_epi32(a, b); }
inline VI vadd_i(VI a, VI b) { return _mm256_add_epi32(a, b); }
inline VI vset1_i(int32_t x) { return _mm256_set1_epi32(x); }
inline VI vshl23(VI a) { return _mm256_slli_epi32(a, 23); }
inline VF vzero_below(VF x, float lo, VF y) {
    return _mm256_and_ps(_mm256_cmp_ps(x, _mm256_set1_ps(lo), _CMP_NLT_UQ), y);
}
#endif

inline VF vexp(VF x) {
    using namespace attn;
    const VF xc = vmin(vmax(x, vset1(kLo)), vset1(kHi));
    const VF z = vfma(xc, vset1(kLog2e), vset1(kMagic));
    const VF n = vsub(z, vset1(kMagic));
    VF r = vfma(n, vset1(-kLn2Hi), xc);
    r = vfma(n, vset1(-kLn2Lo), r);
    VF p = vset1(kC[7]);
    for (int k = 6; k >= 0; --k) p = vfma(p, r, vset1(kC[k]));
    const VI e = vsub_i(vbits(z), vbits(vset1(kMagic)));
    const VF y = vmul(p, vfloat(vshl23(vadd_i(e, vset1_i(127)))));
    return vzero_below(x, kLo, y);
}

void exp_rows_simd(const float* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) vstore(y + i, vexp(vload(x + i)));
    for (; i < n; ++i) y[i] = attn::exp_scalar(x[i]);
}

void swiglu_simd(const float* g, const float* u, float* out, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) {
        const VF x = vload(g + i);
        vstore(out + i, vmul(vdiv(x, vadd(vset1(1.0f), vexp(vneg(x)))), vload(u + i)));
    }
    for (; i < n; ++i) out[i] = attn::silu_scalar(g[i]) * u[i];
}

// N vectors of acc stay in registers across the block's cells. Each lane is one fma chain
// over the cells, so with four chains the FMA latency, not its throughput, set the pace
// (a 64-long head on AVX2 took two passes of four): eight where the row has them.
template <int N>
inline void accumulate_vectors(float* acc, const float* p, int64_t nb, const float* v, int64_t v_stride) {
    VF a[N];
    for (int k = 0; k < N; ++k) a[k] = vload(acc + k * kLanes);
    for (int64_t j = 0; j < nb; ++j) {
        if (p[j] == 0.0f) continue;
        const VF pj = vset1(p[j]);
        const float* vj = v + j * v_stride;
        for (int k = 0; k < N; ++k) a[k] = vfma(pj, vload(vj + k * kLanes), a[k]);
    }
    for (int k = 0; k < N; ++k) vstore(acc + k * kLanes, a[k]);
}

void accumulate_simd(int64_t dv, float* acc, const float* p, int64_t nb, const float* v, int64_t v_stride) {
    int64_t i = 0;
    for (; i + 8 * kLanes <= dv; i += 8 * kLanes) accumulate_vectors<8>(acc + i, p, nb, v + i, v_stride);
    for (; i + 4 * kLanes <= dv; i += 4 * kLanes) accumulate_vectors<4>(acc + i, p, nb, v + i, v_stride);
    for (; i + kLanes <= dv; i += kLanes) accumulate_vectors<1>(acc + i, p, nb, v + i, v_stride);
    for (; i < dv; ++i)
        for (int64_t j = 0; j < nb; ++j)
            if (p[j] != 0.0f) acc[i] = std::fma(p[j], v[j * v_stride + i], acc[i]);
}

}  // namespace
}  // namespace pocket::kernels
