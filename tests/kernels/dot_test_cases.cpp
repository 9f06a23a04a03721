#include "dot_test_cases.hpp"

#include "kernel_test_data.hpp"
#include "kernels/float16.hpp"

#include <cstring>
#include <random>

namespace pocket::kernels::test {
namespace {

// Byte offsets of the fp16 fields inside one block of each type, so random blocks can be
// given finite scales (a random half may be inf or nan, which tests nothing useful).
std::vector<int> half_offsets(GgmlType t) {
    switch (t) {
        case GgmlType::Q4_0: case GgmlType::Q5_0: case GgmlType::Q8_0: case GgmlType::IQ4_NL: case GgmlType::IQ4_XS:
        case GgmlType::IQ2_XXS: case GgmlType::IQ2_XS: case GgmlType::IQ2_S: case GgmlType::IQ3_XXS:
        case GgmlType::IQ3_S: case GgmlType::IQ1_S:
            return {0};
        case GgmlType::TQ1_0: return {52};
        case GgmlType::TQ2_0: return {64};
        case GgmlType::Q4_1: case GgmlType::Q5_1: case GgmlType::Q4_K: case GgmlType::Q5_K: return {0, 2};
        case GgmlType::Q2_K: return {80, 82};
        case GgmlType::Q3_K: return {108};
        case GgmlType::Q6_K: return {208};
        default: return {};
    }
}

std::vector<float> floats_for(DotCase c, int64_t count, std::mt19937& rng) {
    std::vector<float> v(static_cast<size_t>(count));
    std::normal_distribution<float> g(0.f, 1.f);
    std::uniform_int_distribution<int> coin(0, 1);
    for (size_t i = 0; i < v.size(); ++i) {
        switch (c) {
            case DotCase::zeros: v[i] = 0; break;
            // 1000, not more: Q8_1 stores d * sum(q) as fp16, which overflows past ~65504 / 32
            case DotCase::extremes: v[i] = (coin(rng) ? 1.f : -1.f) * (i % 5 == 0 ? 1000.f : 999.f); break;
            case DotCase::sparse: v[i] = (i % 97 == 0) ? 500.f * g(rng) : ((i / 32) % 3 == 0 ? 0.f : 1e-3f * g(rng)); break;
            default: v[i] = g(rng); break;
        }
    }
    return v;
}

}  // namespace

std::string dot_case_name(DotCase c) {
    switch (c) {
        case DotCase::gaussian: return "gaussian";
        case DotCase::zeros: return "zeros";
        case DotCase::extremes: return "extremes";
        case DotCase::sparse: return "sparse";
        case DotCase::random_bytes: return "random_bytes";
    }
    return "?";
}

std::vector<int64_t> dot_lengths(GgmlType t) {
    const int64_t bs = block_size(t);
    if (bs == 1) return {1, 7, 31, 32, 33, 64, 100, 257, 1000, 4097};
    if (bs == 32) return {32, 64, 96, 224, 256, 288, 800, 4128};
    return {256, 512, 768, 2304, 4096};
}

DotRows make_dot_rows(GgmlType wt, DotCase c, int64_t n, int64_t rows, int64_t m, uint32_t seed) {
    std::mt19937 rng(seed);
    const TypeKernels* k = type_kernels(wt);
    DotRows d;
    d.n = n;
    d.w_row_bytes = row_bytes(wt, n);
    d.a_row_bytes = row_bytes(k->vec_dot_type, n);
    d.w.resize(d.w_row_bytes * static_cast<size_t>(rows));
    d.a.resize(d.a_row_bytes * static_cast<size_t>(m));

    // Types pocket cannot quantize (yet) get random blocks in every case but zeros.
    if (c == DotCase::random_bytes || (!k->quantize_row && c != DotCase::zeros)) {
        std::uniform_int_distribution<int> byte(0, 255);
        std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
        for (auto& b : d.w) b = static_cast<uint8_t>(byte(rng));
        const uint32_t bs = block_size(wt);
        const auto offs = half_offsets(wt);
        if (bs == 1) {  // float types: random finite values instead of random bits
            const auto f = floats_for(DotCase::gaussian, n * rows, rng);
            quantize_rows(wt, f.data(), d.w.data(), rows, n);
        } else {
            const size_t bb = d.w_row_bytes / static_cast<size_t>(n / bs);
            for (size_t blk = 0; blk < d.w.size() / bb; ++blk)
                for (int off : offs) {
                    const uint16_t h = f32_to_fp16(scale(rng));
                    std::memcpy(&d.w[blk * bb + static_cast<size_t>(off)], &h, 2);
                }
            if (wt == GgmlType::IQ1_M)  // its fp16 d lives in the top nibbles of the four scale words
                for (size_t blk = 0; blk < d.w.size() / bb; ++blk) {
                    const uint16_t h = f32_to_fp16(scale(rng));
                    for (int w = 0; w < 4; ++w) {
                        uint8_t& hi = d.w[blk * bb + 48 + 2 * static_cast<size_t>(w) + 1];
                        hi = static_cast<uint8_t>((hi & 0x0F) | (((h >> (4 * w)) & 0xF) << 4));
                    }
                }
            if (wt == GgmlType::MXFP4)  // E8M0 scales around 1 (2^-9 .. 2^3)
                for (size_t blk = 0; blk < d.w.size() / bb; ++blk) d.w[blk * bb] = static_cast<uint8_t>(118 + byte(rng) % 13);
        }
        // random activations, with the extreme pattern in every other row
        for (int64_t j = 0; j < m; ++j) {
            const auto f = floats_for(j % 2 ? DotCase::extremes : DotCase::gaussian, n, rng);
            convert_activation_row(k->vec_dot_type, f.data(), d.a.data() + d.a_row_bytes * static_cast<size_t>(j), n);
        }
        return d;
    }
    const auto wf = floats_for(c, n * rows, rng);
    if (k->quantize_row) quantize_rows(wt, wf.data(), d.w.data(), rows, n);  // else all-zero bytes
    for (int64_t j = 0; j < m; ++j) {
        const auto f = floats_for(c, n, rng);
        convert_activation_row(k->vec_dot_type, f.data(), d.a.data() + d.a_row_bytes * static_cast<size_t>(j), n);
    }
    return d;
}

}  // namespace pocket::kernels::test
