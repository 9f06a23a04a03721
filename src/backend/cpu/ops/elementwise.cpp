// Element-wise ops on f32 rows of any stride; results are contiguous. Split by rows.
#include "backend/cpu/ops.hpp"
#include "kernels/kernels.hpp"

#include <cmath>

namespace pocket::cpu {

namespace {

inline float src_at(const uint8_t* row, size_t nb0, int64_t i) {
    return *reinterpret_cast<const float*>(row + static_cast<size_t>(i) * nb0);
}

// The contiguous rows of binary(): out[i] = f(x[i], y[i]) element by element.
template <class F> auto elementwise_rows(F f) {
    return [f](const float* x, const float* y, float* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) out[i] = f(x[i], y[i]);
    };
}

// dst = f(a, b) with b broadcast (b.ne[i] divides a.ne[i]); rows that are contiguous in both
// go through rows(x, y, out, n), which must give f's bits (a kernel, where there is one).
template <class F, class Rows> void binary(const OpContext& ctx, Tensor& dst, F f, Rows rows) {
    const Tensor& a = *dst.src[0];
    const Tensor& b = *dst.src[1];
    const int64_t n = dst.ne[0];
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);
        const uint8_t* ar = row_ptr(a, ix);
        const uint8_t* br = row_ptr(b, {ix.i1 % b.ne[1], ix.i2 % b.ne[2], ix.i3 % b.ne[3]});
        float* out = reinterpret_cast<float*>(row_ptr(dst, ix));
        if (b.ne[0] == n && a.nb[0] == sizeof(float) && b.nb[0] == sizeof(float)) {
            const auto* x = reinterpret_cast<const float*>(ar);
            const auto* y = reinterpret_cast<const float*>(br);
            rows(x, y, out, n);
        } else {
            for (int64_t i = 0; i < n; ++i) out[i] = f(src_at(ar, a.nb[0], i), src_at(br, b.nb[0], i % b.ne[0]));
        }
    }
}
template <class F> void binary(const OpContext& ctx, Tensor& dst, F f) { binary(ctx, dst, f, elementwise_rows(f)); }

template <class F> void unary(const OpContext& ctx, Tensor& dst, F f) {
    const Tensor& a = *dst.src[0];
    const int64_t n = dst.ne[0];
    const auto [r0, r1] = ctx.range(dst.nrows());
    for (int64_t r = r0; r < r1; ++r) {
        const RowIndex ix = row_index(dst, r);
        const uint8_t* ar = row_ptr(a, ix);
        float* out = reinterpret_cast<float*>(row_ptr(dst, ix));
        for (int64_t i = 0; i < n; ++i) out[i] = f(src_at(ar, a.nb[0], i));
    }
}

// ggml's tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline float gelu(float x) {
    constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
    constexpr float kCoef = 0.044715f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

}  // namespace

void op_add(const OpContext& ctx, Tensor& dst) { binary(ctx, dst, [](float x, float y) { return x + y; }); }
void op_mul(const OpContext& ctx, Tensor& dst) { binary(ctx, dst, [](float x, float y) { return x * y; }); }
// silu through pocket's exp, not libm's: the kernel's bits on every ISA, row or element.
void op_swiglu(const OpContext& ctx, Tensor& dst) {
    binary(ctx, dst, [](float g, float u) { return kernels::silu(g) * u; }, kernels::attn_kernels()->swiglu);
}
void op_geglu(const OpContext& ctx, Tensor& dst) { binary(ctx, dst, [](float g, float u) { return gelu(g) * u; }); }

void op_scale(const OpContext& ctx, Tensor& dst) {
    const float s = dst.params<float>();
    unary(ctx, dst, [s](float x) { return x * s; });
}
void op_silu(const OpContext& ctx, Tensor& dst) { unary(ctx, dst, kernels::silu); }
void op_gelu(const OpContext& ctx, Tensor& dst) { unary(ctx, dst, gelu); }
void op_tanh(const OpContext& ctx, Tensor& dst) { unary(ctx, dst, [](float x) { return std::tanh(x); }); }

}  // namespace pocket::cpu
