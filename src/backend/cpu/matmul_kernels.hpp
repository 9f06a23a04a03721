#pragma once
// The dot product and GEMM mul_mat uses for a weight type: the kernels library's row when it
// has one, else pocket's own F32 and F16 paths (so graphs run before and without the kernels).
#include "pocket/ggml_type.hpp"

#include <cstddef>
#include <cstdint>

namespace pocket::cpu {

struct MatmulKernels {
    GgmlType vec_dot_type;  // activations are converted to this type once per batch
    void (*convert_activation)(GgmlType act_type, const float* src, void* dst, int64_t n);
    void (*vec_dot)(int64_t n, float* out, const void* x, const void* y);
    void (*gemm)(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* a, size_t a_stride, int64_t m,
                 float* c, size_t c_stride);
};

// Null when no dot product exists for the type.
const MatmulKernels* matmul_kernels(GgmlType weight_type);

}  // namespace pocket::cpu
