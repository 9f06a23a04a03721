// Flash attention's inner steps and SwiGLU, the scalar definitions (every ISA reproduces these bits).
#include "kernels/attn_math.hpp"
#include "kernels/isa_table.hpp"

namespace pocket::kernels {
namespace {

void exp_rows(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = attn::exp_scalar(x[i]);
}

void accumulate(int64_t dv, float* acc, const float* p, int64_t nb, const float* v, int64_t v_stride) {
    for (int64_t j = 0; j < nb; ++j) {
        if (p[j] == 0.0f) continue;
        const float* vj = v + j * v_stride;
        for (int64_t i = 0; i < dv; ++i) acc[i] = std::fma(p[j], vj[i], acc[i]);
    }
}

void swiglu_rows(const float* g, const float* u, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = attn::silu_scalar(g[i]) * u[i];
}

}  // namespace

AttnKernels attn_kernels_scalar() { return {exp_rows, accumulate, swiglu_rows}; }
float silu(float x) { return attn::silu_scalar(x); }

}  // namespace pocket::kernels
