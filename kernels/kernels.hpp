#pragma once
// The kernels' interface: the only header the rest of pocket includes from kernels/.
//
// One table row per ggml type (TypeKernels) gives its row conversions and, for the ISA
// chosen once at start-up, its dot product and GEMM. Callers fetch the row once, outside
// their loops, and call through the pointers: no switch on type or ISA in a hot loop.
//
// Determinism contract (pocket promises the same logits whatever -t or -b):
//  - vec_dot's reduction order is fixed for a given ISA and n;
//  - gemm produces, for every (weight row, activation row) pair, exactly the bits that
//    vec_dot produces for that pair on the same ISA. So a prompt evaluated in one batch or
//    token by token gives bitwise identical results.
#include "pocket/ggml_type.hpp"

#include <cstddef>
#include <cstdint>

namespace pocket::kernels {

// avxvnni: AVX2 with AVX-VNNI's ymm integer dots (no AVX-512), after the others so that
// the table indices of the first four stay put.
enum class Isa { scalar, avx2, avx512, neon, avxvnni };

// The ISA in use: the best the CPU supports, or POCKET_ISA=scalar|avx2|avxvnni|avx512|neon when set
// (an override the CPU cannot run is refused: it falls back to the best supported, with a
// warning on stderr). Decided once, on first use.
Isa active_isa();
const char* isa_name(Isa isa);
bool isa_supported(Isa isa);  // can this CPU run it, and was it compiled in
// Makes `isa` the active one (tests only; must be supported). Returns the previous one.
Isa set_active_isa(Isa isa);

// f32 row -> weight row, reference quantization. `imatrix` (n per-column importance weights)
// is optional; K-quants use it to weight the rounding error.
using QuantizeRowFn = void (*)(const float* src, void* dst, int64_t n, const float* imatrix);
// weight row -> f32, exactly as ggml dequantizes (bit-exact).
using DequantizeRowFn = void (*)(const void* src, float* dst, int64_t n);
// Dot of a weight row x (this type) with an activation row y (of vec_dot_type), n elements.
using VecDotFn = void (*)(int64_t n, float* out, const void* x, const void* y);
// C[j * c_stride + i] = dot(W row i, A row j) for i < rows, j < m. Strides in bytes for W
// and A, in floats for C. Bitwise equal to vec_dot per element (see the contract above).
using GemmFn = void (*)(int64_t n, const void* w, size_t w_stride, int64_t rows,
                        const void* a, size_t a_stride, int64_t m, float* c, size_t c_stride);

struct TypeKernels {
    GgmlType type;
    GgmlType vec_dot_type;         // the activation type this type's dot pairs with (as in ggml)
    QuantizeRowFn quantize_row;    // null: this type cannot be produced
    DequantizeRowFn dequantize_row;
    VecDotFn vec_dot;              // for the active ISA; null: no dot product for this type
    GemmFn gemm;                   // for the active ISA; never null when vec_dot is set
};

// The row for a type, for the active ISA; null when pocket has no kernels for it.
const TypeKernels* type_kernels(GgmlType type);

// Optional load-time repacking (added by the kernels issue; the entries above are unchanged).
// A repacked matrix interleaves groups of `rows_per_group` weight rows block by block, so
// one pass over memory feeds several output rows (token generation is matrix x vector).
// Its GEMM gives exactly the bits of `gemm`/`vec_dot` on the original rows.
//  - Only whole groups: repack a matrix whose row count is a multiple of rows_per_group.
//  - Group g starts at byte g * packed_bytes(rows_per_group, n) of the packed buffer, so a
//    thread handling rows [i0, i1) (multiples of rows_per_group) passes packed + that offset.
//  - The packed size equals the original size (no padding), for every type offered here.
struct RepackKernels {
    int rows_per_group;
    size_t (*packed_bytes)(int64_t rows, int64_t n);
    // `rows` rows of n elements, w_stride bytes apart -> dst (packed_bytes(rows, n) bytes). Groups
    // are stored in order, so rows r0.. (r0 a multiple of rows_per_group) pack to dst +
    // packed_bytes(r0, n) on their own.
    void (*pack)(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
    // C[j * c_stride + i] = dot(row i, A row j), i < rows (a multiple of rows_per_group), j < m.
    void (*gemm)(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                 size_t c_stride);
};

// While one of these lives on a thread, the repacked GEMMs called on that thread may keep what
// they derive from the activation rows (Q4_0's and Q8_0's per-block sums and float scales) from
// one call to the next with the same rows (pointer, stride, count, length): the holder promises
// that the rows do not change meanwhile. mul_mat holds one over the chunks of rows it claims,
// which all read the same activations; without one every call derives them afresh.
class SameActivations {
public:
    SameActivations();
    ~SameActivations();
    SameActivations(const SameActivations&) = delete;
    SameActivations& operator=(const SameActivations&) = delete;
};
// The live SameActivations' number on this thread (0: none); never the same twice.
uint64_t same_activations_scope();

// Which activation rows (pointer, stride, count, blocks per row) a GEMM's saved derivation came
// from (one per GEMM and thread): reuse() says whether it may be reused for these rows (the
// same rows, inside the same live scope); when not, it records them as the new source and the
// caller derives afresh.
class DerivedActivations {
public:
    bool reuse(const void* a, size_t a_stride, int64_t m, int64_t blocks);

private:
    const void* a_ = nullptr;
    size_t a_stride_ = 0;
    int64_t m_ = 0, blocks_ = 0;
    uint64_t scope_ = 0;
};

// The repacking of a weight type for the active ISA; null when the type has none (today: Q4_0,
// Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS have one). On the scalar and NEON ISAs its gemm is
// the scalar reference: the CPU device repacks only on the x86 SIMD ISAs (cpu_device.cpp).
const RepackKernels* repack_kernels(GgmlType type);

// Flash attention's inner steps and SwiGLU, for the active ISA. Each is a fixed sequence of
// IEEE fma / mul / div / add / compare per element (kernels/attn_math.hpp), so every ISA gives
// exactly the bits of the scalar definition and the result does not depend on the lane count.
struct AttnKernels {
    // y[i] = e^x[i] for i < n (y may be x): pocket's own exp, within 2 ulp of e^x on
    // [-87.33, 88]; 0 below -87.33 and for -inf (a masked score).
    void (*exp)(const float* x, float* y, int64_t n);
    // For j < nb in order, acc[i] = fma(p[j], v[j * v_stride + i], acc[i]) for i < dv; a cell
    // with p[j] == 0 is skipped, so a masked cell's row is never read.
    void (*accumulate)(int64_t dv, float* acc, const float* p, int64_t nb, const float* v, int64_t v_stride);
    // out[i] = silu(g[i]) * u[i] for i < n, silu as below (the feed-forward gate).
    void (*swiglu)(const float* g, const float* u, float* out, int64_t n);
};
const AttnKernels* attn_kernels();
// x / (1 + e^-x) through the exp above: the bits of every swiglu kernel's silu.
float silu(float x);

// Activation conversion: f32 row -> vec_dot_type row (Q8_0, Q8_1, Q8_K, F16, BF16 or F32).
void convert_activation_row(GgmlType act_type, const float* src, void* dst, int64_t n);

// Convenience for callers outside hot loops; throw pocket::Error on an unsupported type.
void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n);
void quantize_rows(GgmlType type, const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                   const float* imatrix = nullptr);

}  // namespace pocket::kernels
