// f16 <-> f32 rows with F16C (included by dot_avx2.cpp; AVX-512 CPUs use the same). The
// KV cache is f16: flash attention converts its rows to f32 for every tile, and every new
// token's K and V are stored through here. vcvtph2ps is exact and vcvtps2ph rounds to
// nearest even, as the scalar conversions in float16.hpp do; the tails go through those.
namespace pocket::kernels {
namespace {

void dequantize_row_f16_f16c(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const uint16_t*>(vx);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
    for (; i < n; ++i) y[i] = fp16_to_f32(x[i]);
}

void quantize_row_f16_f16c(const float* x, void* vy, int64_t n, const float*) {
    auto* y = static_cast<uint16_t*>(vy);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

}  // namespace
}  // namespace pocket::kernels
