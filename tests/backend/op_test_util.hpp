#pragma once
// Helpers for the backend op tests: random inputs, element access through any strides, and
// a naive double-precision reference compared element by element.
#include "kernels/kernels.hpp"
#include "pocket/backend.hpp"
#include "pocket/graph.hpp"
#include "pocket/scheduler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

namespace pocket::test {

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

// Fills an f32 (or i32) input with random values in [lo, hi).
inline void fill_random(Tensor* t, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    auto v = random_floats(static_cast<size_t>(t->nelements()), seed, lo, hi);
    tensor_set(*t, v.data(), v.size() * sizeof(float));
}

// One row of n values into `type` (f32, f16, q8_0 ...), and back, with the kernels' conversions.
inline void store_row(GgmlType type, const float* src, void* dst, int64_t n) { kernels::quantize_rows(type, src, dst, 1, n); }
inline void load_row(GgmlType type, const void* src, float* dst, int64_t n) { kernels::dequantize_row(type, src, dst, n); }
// x rounded to f16 and back.
inline float round_f16(float x) {
    uint16_t h;
    store_row(GgmlType::F16, &x, &h, 1);
    load_row(GgmlType::F16, &h, &x, 1);
    return x;
}

// f32 element at logical indices, through the tensor's strides (host memory).
inline float get_f32(const Tensor& t, int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) {
    float v;
    std::memcpy(&v, t.element(i0, i1, i2, i3), sizeof(float));
    return v;
}

// Compares every element of f32 `out` with ref(i0, i1, i2, i3) to |d| <= atol + rtol |ref|.
inline void expect_close(const Tensor& out, const std::function<double(int64_t, int64_t, int64_t, int64_t)>& ref,
                         double rtol = 1e-5, double atol = 1e-6) {
    int failures = 0;
    for (int64_t i3 = 0; i3 < out.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < out.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < out.ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < out.ne[0]; ++i0) {
                    const double want = ref(i0, i1, i2, i3);
                    const double got = get_f32(out, i0, i1, i2, i3);
                    if (!(std::fabs(got - want) <= atol + rtol * std::fabs(want)) && failures++ < 5)
                        ADD_FAILURE() << tensor_desc(out) << " at [" << i0 << "," << i1 << "," << i2 << "," << i3
                                      << "]: got " << got << ", want " << want;
                }
    EXPECT_EQ(failures, 0);
}

// Byte image of an f32 result (contiguous), for bitwise comparisons.
inline std::vector<uint8_t> bytes_of(const Tensor& t) {
    std::vector<uint8_t> b(t.nbytes());
    tensor_get(t, b.data(), b.size());
    return b;
}

// One backend + scheduler for a test graph.
struct CpuRunner {
    // Every op split across the threads unless min_parallel_cost says otherwise.
    explicit CpuRunner(int n_threads = 2, bool poison = false, int64_t min_parallel_cost = 0)
        : backend(make_cpu_backend({.n_threads = n_threads, .min_parallel_cost = min_parallel_cost, .adapt_threads = false})),
          sched(*backend, {.poison = poison}) {}
    std::unique_ptr<Backend> backend;
    Scheduler sched;
};

}  // namespace pocket::test
