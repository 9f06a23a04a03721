#pragma once
// The scale searches ggml's reference quantizers run. Reproducing them operation for
// operation (same float expression order, no FMA contraction) gives the same bytes as
// llama-quantize, so files written by pocket hash like llama.cpp's.
#include <bit>
#include <cstdint>

namespace pocket::kernels::search {

// Round to nearest, ties to even, via the 1.5*2^23 trick ggml uses (valid for |x| < 2^22).
inline int nearest_int(float x) {
    const float biased = x + 12582912.f;
    return static_cast<int>(std::bit_cast<uint32_t>(biased) & 0x007FFFFF) - 0x00400000;
}

// Symmetric levels -nmax..nmax-1 (stored offset by nmax). rmse_type 1 weights by x^2 or
// by qw when given; returns the scale. ggml: make_qx_quants.
float symmetric_levels(int n, int nmax, const float* x, int8_t* L, int rmse_type, const float* qw);

// Symmetric levels for Q3_K's reference path, refined by coordinate descent.
float symmetric_levels_q3(int n, int nmax, const float* x, int8_t* L, bool do_rmse);

// Affine levels 0..nmax with a non-positive offset; `the_min` receives -min. `weights`
// may be null in the refined variant (then x^2). ggml: make_qkx2_quants / make_qkx3_quants.
float affine_levels(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                    uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad);
float affine_levels_x3(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad);

// Non-negative levels 0..nmax for the scales of scales, weighted. ggml: make_qp_quants.
float positive_levels(int n, int nmax, const float* x, uint8_t* L, const float* qw);

}  // namespace pocket::kernels::search
