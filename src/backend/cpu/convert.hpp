#pragma once
// Row conversions between f32 and the types the CPU ops read and write (KV cache, weights for
// get_rows), taken from the kernels' type table: fetch the function once per op, outside the
// row loop.
#include "pocket/ggml_type.hpp"

#include <cstdint>

namespace pocket::cpu {

using ToF32Fn = void (*)(const void* src, float* dst, int64_t n);
// The kernels' quantize_row signature; the CPU ops pass no importance matrix (null).
using FromF32Fn = void (*)(const float* src, void* dst, int64_t n, const float* imatrix);

// Null when the type has no such conversion.
ToF32Fn to_f32_fn(GgmlType type);
FromF32Fn from_f32_fn(GgmlType type);

}  // namespace pocket::cpu
