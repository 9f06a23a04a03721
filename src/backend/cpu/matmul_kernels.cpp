// Kernel lookup for mul_mat, with pocket's own F32/F16 fallback (see matmul_kernels.hpp).
#include "backend/cpu/matmul_kernels.hpp"

#include "backend/cpu/convert.hpp"
#include "backend/cpu/dot.hpp"

#ifndef POCKET_KERNELS_PLACEHOLDER
#include "kernels/kernels.hpp"
#endif

#include <array>

namespace pocket::cpu {

namespace {

void own_convert(GgmlType act_type, const float* src, void* dst, int64_t n) { row_from_f32(act_type, src, dst, n); }

void vec_dot_f32(int64_t n, float* out, const void* x, const void* y) {
    *out = dot_f32(static_cast<const float*>(x), static_cast<const float*>(y), n);
}

// f16 x f16 products accumulated in f32, in the same fixed order as dot_f32.
void vec_dot_f16(int64_t n, float* out, const void* x, const void* y) {
    const auto* a = static_cast<const uint16_t*>(x);
    const auto* b = static_cast<const uint16_t*>(y);
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int l = 0; l < 8; ++l) acc[l] += fp16_to_fp32(a[i + l]) * fp16_to_fp32(b[i + l]);
    for (int l = 0; i < n; ++i, ++l) acc[l] += fp16_to_fp32(a[i]) * fp16_to_fp32(b[i]);
    *out = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// GEMM as repeated vec_dot: bitwise equal to it by construction (the kernels' contract).
template <void (*Dot)(int64_t, float*, const void*, const void*)>
void gemm_by_dot(int64_t n, const void* w, size_t w_stride, int64_t rows, const void* a, size_t a_stride, int64_t m,
                 float* c, size_t c_stride) {
    const auto* wb = static_cast<const uint8_t*>(w);
    const auto* ab = static_cast<const uint8_t*>(a);
    for (int64_t j = 0; j < m; ++j)
        for (int64_t i = 0; i < rows; ++i) Dot(n, &c[j * c_stride + i], wb + i * w_stride, ab + j * a_stride);
}

constexpr MatmulKernels kOwnF32{GgmlType::F32, own_convert, vec_dot_f32, gemm_by_dot<vec_dot_f32>};
constexpr MatmulKernels kOwnF16{GgmlType::F16, own_convert, vec_dot_f16, gemm_by_dot<vec_dot_f16>};

const MatmulKernels* own_kernels(GgmlType t) {
    if (t == GgmlType::F32) return &kOwnF32;
    if (t == GgmlType::F16) return &kOwnF16;
    return nullptr;
}

}  // namespace

#ifdef POCKET_KERNELS_PLACEHOLDER
const MatmulKernels* matmul_kernels(GgmlType weight_type) { return own_kernels(weight_type); }
#else
const MatmulKernels* matmul_kernels(GgmlType weight_type) {
    // One table, filled on first use from the kernels' rows (read-only afterwards).
    static const auto table = [] {
        std::array<MatmulKernels, 64> rows{};
        std::array<bool, 64> present{};
        for (const auto& info : kGgmlTypes) {
            const auto id = static_cast<size_t>(info.type);
            const kernels::TypeKernels* k = kernels::type_kernels(info.type);
            if (k && k->vec_dot && k->gemm) {
                rows[id] = MatmulKernels{k->vec_dot_type, kernels::convert_activation_row, k->vec_dot, k->gemm};
                present[id] = true;
            } else if (const MatmulKernels* own = own_kernels(info.type)) {
                rows[id] = *own;
                present[id] = true;
            }
        }
        return std::pair{rows, present};
    }();
    const auto id = static_cast<size_t>(weight_type);
    return id < table.first.size() && table.second[id] ? &table.first[id] : nullptr;
}
#endif

}  // namespace pocket::cpu
