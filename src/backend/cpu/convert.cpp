// Row conversions from the kernels' type table (see convert.hpp).
#include "backend/cpu/convert.hpp"

#include "kernels/kernels.hpp"

#include <cstring>

namespace pocket::cpu {

namespace {
void copy_f32(const void* src, float* dst, int64_t n) { std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); }
void copy_to_f32(const float* src, void* dst, int64_t n, const float*) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}
}  // namespace

ToF32Fn to_f32_fn(GgmlType type) {
    if (type == GgmlType::F32) return copy_f32;
    const kernels::TypeKernels* k = kernels::type_kernels(type);
    return k ? k->dequantize_row : nullptr;
}

FromF32Fn from_f32_fn(GgmlType type) {
    if (type == GgmlType::F32) return copy_to_f32;
    const kernels::TypeKernels* k = kernels::type_kernels(type);
    return k ? k->quantize_row : nullptr;
}

}  // namespace pocket::cpu
