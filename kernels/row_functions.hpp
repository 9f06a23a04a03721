#pragma once
// Internal: the scalar reference functions of every type, one name per (operation, type).
// The dispatch table (dispatch.cpp) is the only user outside the tests.
#include <cstddef>
#include <cstdint>

namespace pocket::kernels {

#define POCKET_ROW_FUNCTIONS(T)                                                   \
    void quantize_row_##T(const float* src, void* dst, int64_t n, const float* imatrix); \
    void dequantize_row_##T(const void* src, float* dst, int64_t n);

POCKET_ROW_FUNCTIONS(f32)
POCKET_ROW_FUNCTIONS(f16)
POCKET_ROW_FUNCTIONS(bf16)
POCKET_ROW_FUNCTIONS(q4_0)
POCKET_ROW_FUNCTIONS(q4_1)
POCKET_ROW_FUNCTIONS(q5_0)
POCKET_ROW_FUNCTIONS(q5_1)
POCKET_ROW_FUNCTIONS(q8_0)
POCKET_ROW_FUNCTIONS(q8_1)
POCKET_ROW_FUNCTIONS(q2_K)
POCKET_ROW_FUNCTIONS(q3_K)
POCKET_ROW_FUNCTIONS(q4_K)
POCKET_ROW_FUNCTIONS(q5_K)
POCKET_ROW_FUNCTIONS(q6_K)
POCKET_ROW_FUNCTIONS(q8_K)
POCKET_ROW_FUNCTIONS(iq4_nl)
POCKET_ROW_FUNCTIONS(iq4_xs)
#undef POCKET_ROW_FUNCTIONS

// Types pocket reads and runs; their quantizers are in quantize_iq*.cpp / quantize_ternary.cpp.
void quantize_row_iq2_xxs(const float* src, void* dst, int64_t n, const float* imatrix);
void quantize_row_iq2_xs(const float* src, void* dst, int64_t n, const float* imatrix);
void quantize_row_iq2_s(const float* src, void* dst, int64_t n, const float* imatrix);
void dequantize_row_iq2_xxs(const void* src, float* dst, int64_t n);
void dequantize_row_iq2_xs(const void* src, float* dst, int64_t n);
void dequantize_row_iq2_s(const void* src, float* dst, int64_t n);
void dequantize_row_iq3_xxs(const void* src, float* dst, int64_t n);
void dequantize_row_iq3_s(const void* src, float* dst, int64_t n);
void quantize_row_iq3_xxs(const float* src, void* dst, int64_t n, const float* imatrix);
void quantize_row_iq3_s(const float* src, void* dst, int64_t n, const float* imatrix);
void dequantize_row_iq1_s(const void* src, float* dst, int64_t n);
void dequantize_row_iq1_m(const void* src, float* dst, int64_t n);
void quantize_row_iq1_s(const float* src, void* dst, int64_t n, const float* imatrix);
void quantize_row_iq1_m(const float* src, void* dst, int64_t n, const float* imatrix);
void dequantize_row_tq1_0(const void* src, float* dst, int64_t n);
void dequantize_row_tq2_0(const void* src, float* dst, int64_t n);
void dequantize_row_mxfp4(const void* src, float* dst, int64_t n);

// Quantizers of the ternary types and MXFP4 (importance matrix ignored, as in ggml).
void quantize_row_tq1_0(const float* src, void* dst, int64_t n, const float* imatrix);
void quantize_row_tq2_0(const float* src, void* dst, int64_t n, const float* imatrix);
void quantize_row_mxfp4(const float* src, void* dst, int64_t n, const float* imatrix);

// Scalar dot products: the reference every SIMD version must reproduce bit for bit.
namespace scalar {
void vec_dot_f32(int64_t n, float* out, const void* x, const void* y);
void vec_dot_f16(int64_t n, float* out, const void* x, const void* y);
void vec_dot_bf16(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q4_0(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q4_1(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q5_0(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q5_1(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q8_0(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq4_nl(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q2_K(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q3_K(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q4_K(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q5_K(int64_t n, float* out, const void* x, const void* y);
void vec_dot_q6_K(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq4_xs(int64_t n, float* out, const void* x, const void* y);
void vec_dot_mxfp4(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq2_xxs(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq2_xs(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq2_s(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq3_xxs(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq3_s(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq1_s(int64_t n, float* out, const void* x, const void* y);
void vec_dot_iq1_m(int64_t n, float* out, const void* x, const void* y);
void vec_dot_tq1_0(int64_t n, float* out, const void* x, const void* y);
void vec_dot_tq2_0(int64_t n, float* out, const void* x, const void* y);
}  // namespace scalar

}  // namespace pocket::kernels
