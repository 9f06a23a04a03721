// Convenience conversions for callers outside hot loops (model loading, tools, tests).
#include "kernels/kernels.hpp"

#include <string>

#if __has_include(<fmt/format.h>)
#include "pocket/error.hpp"
#define POCKET_KERNELS_THROW(msg) throw pocket::Error(msg)
#else  // kernels-only cross builds have no fmt: same message, standard exception
#include <stdexcept>
#define POCKET_KERNELS_THROW(msg) throw std::runtime_error(msg)
#endif

namespace pocket::kernels {
namespace {

// Looked up here rather than through ggml_type_info(): that lives in the pocket library,
// which the kernels must not depend on.
const GgmlTypeInfo* find_type(GgmlType type) {
    for (const auto& row : kGgmlTypes)
        if (row.type == type) return &row;
    return nullptr;
}

const TypeKernels& row_or_throw(GgmlType type, const char* what) {
    const TypeKernels* k = type_kernels(type);
    const auto* info = find_type(type);
    const std::string name = info ? std::string(info->name) : "type " + std::to_string(static_cast<uint32_t>(type));
    if (!k) POCKET_KERNELS_THROW(std::string("kernels: no ") + what + " for " + name);
    return *k;
}

void check_row_length(GgmlType type, int64_t n) {
    const auto* info = find_type(type);
    if (info && n % info->block_size != 0)
        POCKET_KERNELS_THROW("kernels: row of " + std::to_string(n) + " elements is not a multiple of " +
                             std::string(info->name) + "'s block size " + std::to_string(info->block_size));
}

}  // namespace

void convert_activation_row(GgmlType act_type, const float* src, void* dst, int64_t n) {
    const TypeKernels* k = type_kernels(act_type);
    k->quantize_row(src, dst, n, nullptr);
}

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
    const TypeKernels& k = row_or_throw(type, "dequantization");
    check_row_length(type, n);
    k.dequantize_row(src, dst, n);
}

void quantize_rows(GgmlType type, const float* src, void* dst, int64_t nrows, int64_t n_per_row,
                   const float* imatrix) {
    const TypeKernels& k = row_or_throw(type, "quantization");
    if (!k.quantize_row) POCKET_KERNELS_THROW("kernels: no quantization for this type");
    check_row_length(type, n_per_row);
    const auto* info = find_type(type);
    const size_t row_bytes = static_cast<size_t>(n_per_row / info->block_size) * info->block_bytes;
    for (int64_t r = 0; r < nrows; ++r)
        k.quantize_row(src + r * n_per_row, static_cast<char*>(dst) + static_cast<size_t>(r) * row_bytes, n_per_row,
                       imatrix);
}

}  // namespace pocket::kernels
