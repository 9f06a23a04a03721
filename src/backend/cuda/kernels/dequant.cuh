#pragma once
// Device-side dequantization of weight rows (ggml's block layouts), a direct port of the
// Vulkan backend's shaders/dequant.glsl. For a weight type T:
//   dequant1<T>(row, c, l): element 32c + l of the row starting at `row`;
//   dequant4<T>(row, c, l, n, w): elements 128c + 4l .. 128c + 4l + 3 (w[e] == dequant1 of
//     each), n = how many of them lie in the row (< 4 only at the end of a float row; the
//     others are set to 0 and not read).
// Every expression is written with explicit round-to-nearest intrinsics in the order of the
// CPU's kernels/dequantize.cpp (no contraction into FMA), so get_rows gives the CPU's bits.
// Quantized blocks are only 2-byte aligned: 32-bit words are read as two 16-bit halves.
#include "pocket/ggml_type.hpp"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace pocket::cuda::dq {

__device__ __forceinline__ uint32_t u8(const uint8_t* p) { return static_cast<uint32_t>(*p); }
__device__ __forceinline__ int32_t i8(const uint8_t* p) { return static_cast<int32_t>(*reinterpret_cast<const int8_t*>(p)); }
__device__ __forceinline__ uint32_t u16(const uint8_t* p) { return static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(p)); }
__device__ __forceinline__ uint32_t u32(const uint8_t* p) { return u16(p) | (u16(p + 2) << 16); }  // p 2-aligned
__device__ __forceinline__ float f16(const uint8_t* p) { return __half2float(__ushort_as_half(*reinterpret_cast<const unsigned short*>(p))); }
__device__ __forceinline__ float bf16(const uint8_t* p) { return __uint_as_float(u16(p) << 16); }
__device__ __forceinline__ float f32(const uint8_t* p) { return *reinterpret_cast<const float*>(p); }

// kvalues_iq4nl (-127, -104, ..., 113) packed as signed bytes, four per word.
__device__ __forceinline__ float iq4nl_value(uint32_t i) {
    constexpr uint32_t w0 = 0xBFAD9881u;  // -127 -104 -83 -65
    constexpr uint32_t w1 = 0xF6EADDCFu;  //  -49  -35 -22 -10
    constexpr uint32_t w2 = 0x26190D01u;  //    1   13  25  38
    constexpr uint32_t w3 = 0x71594535u;  //   53   69  89 113
    const uint32_t w = i < 8u ? (i < 4u ? w0 : w1) : (i < 12u ? w2 : w3);
    return static_cast<float>(static_cast<int32_t>(static_cast<int8_t>(static_cast<uint8_t>(w >> (8u * (i & 3u))))));
}

// The 6-bit scale and min of sub-block j from the 12 scale bytes at s (get_scale_min_k4).
__device__ __forceinline__ void scale_min_k4(const uint8_t* s, uint32_t j, float& sc, float& m) {
    if (j < 4u) {
        sc = static_cast<float>(u8(s + j) & 63u);
        m = static_cast<float>(u8(s + j + 4u) & 63u);
    } else {
        sc = static_cast<float>((u8(s + j + 4u) & 15u) | ((u8(s + j - 4u) >> 6) << 4));
        m = static_cast<float>((u8(s + j + 4u) >> 4) | ((u8(s + j) >> 6) << 4));
    }
}

template <GgmlType T> struct Traits;
template <> struct Traits<GgmlType::F32> { static constexpr uint32_t qk = 1, bytes = 4; };
template <> struct Traits<GgmlType::F16> { static constexpr uint32_t qk = 1, bytes = 2; };
template <> struct Traits<GgmlType::BF16> { static constexpr uint32_t qk = 1, bytes = 2; };
template <> struct Traits<GgmlType::Q4_0> { static constexpr uint32_t qk = 32, bytes = 18; };
template <> struct Traits<GgmlType::Q4_1> { static constexpr uint32_t qk = 32, bytes = 20; };
template <> struct Traits<GgmlType::Q5_0> { static constexpr uint32_t qk = 32, bytes = 22; };
template <> struct Traits<GgmlType::Q5_1> { static constexpr uint32_t qk = 32, bytes = 24; };
template <> struct Traits<GgmlType::Q8_0> { static constexpr uint32_t qk = 32, bytes = 34; };
template <> struct Traits<GgmlType::Q2_K> { static constexpr uint32_t qk = 256, bytes = 84; };
template <> struct Traits<GgmlType::Q3_K> { static constexpr uint32_t qk = 256, bytes = 110; };
template <> struct Traits<GgmlType::Q4_K> { static constexpr uint32_t qk = 256, bytes = 144; };
template <> struct Traits<GgmlType::Q5_K> { static constexpr uint32_t qk = 256, bytes = 176; };
template <> struct Traits<GgmlType::Q6_K> { static constexpr uint32_t qk = 256, bytes = 210; };
template <> struct Traits<GgmlType::IQ4_NL> { static constexpr uint32_t qk = 32, bytes = 18; };
template <> struct Traits<GgmlType::IQ4_XS> { static constexpr uint32_t qk = 256, bytes = 136; };

template <GgmlType T> inline constexpr bool is_float_type = T == GgmlType::F32 || T == GgmlType::F16 || T == GgmlType::BF16;

// Element 32c + l (l < 32) of the row at `row`.
template <GgmlType T>
__device__ __forceinline__ float dequant1(const uint8_t* row, uint64_t c, uint32_t l) {
    constexpr uint32_t QB = Traits<T>::bytes;
    if constexpr (T == GgmlType::F32) {
        return f32(row + 4u * (32u * c + l));
    } else if constexpr (T == GgmlType::F16) {
        return f16(row + 2u * (32u * c + l));
    } else if constexpr (T == GgmlType::BF16) {
        return bf16(row + 2u * (32u * c + l));
    } else if constexpr (T == GgmlType::Q4_0) {  // d qs[16]: low nibbles are elements 0-15
        const uint8_t* b = row + c * QB;
        const uint32_t q = (u8(b + 2u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u;
        return __fmul_rn(static_cast<float>(static_cast<int32_t>(q) - 8), f16(b));
    } else if constexpr (T == GgmlType::Q4_1) {  // d m qs[16]
        const uint8_t* b = row + c * QB;
        const uint32_t q = (u8(b + 4u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u;
        return __fadd_rn(__fmul_rn(static_cast<float>(q), f16(b)), f16(b + 2u));
    } else if constexpr (T == GgmlType::Q5_0) {  // d qh[4] qs[16]: bit l of qh is element l's fifth bit
        const uint8_t* b = row + c * QB;
        const uint32_t q = ((u8(b + 6u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u) | (((u8(b + 2u + (l >> 3)) >> (l & 7u)) & 1u) << 4);
        return __fmul_rn(static_cast<float>(static_cast<int32_t>(q) - 16), f16(b));
    } else if constexpr (T == GgmlType::Q5_1) {  // d m qh[4] qs[16]
        const uint8_t* b = row + c * QB;
        const uint32_t q = ((u8(b + 8u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u) | (((u8(b + 4u + (l >> 3)) >> (l & 7u)) & 1u) << 4);
        return __fadd_rn(__fmul_rn(static_cast<float>(q), f16(b)), f16(b + 2u));
    } else if constexpr (T == GgmlType::Q8_0) {  // d qs[32]
        const uint8_t* b = row + c * QB;
        return __fmul_rn(static_cast<float>(i8(b + 2u + l)), f16(b));
    } else if constexpr (T == GgmlType::Q2_K) {  // scales[16] qs[64] d dmin
        const uint8_t* b = row + (c >> 3) * QB;
        const uint32_t sub = static_cast<uint32_t>(c & 7u), h = sub >> 2, j = sub & 3u;
        const uint32_t sc = u8(b + h * 8u + j * 2u + (l >> 4));
        const uint32_t q = (u8(b + 16u + h * 32u + l) >> (2u * j)) & 3u;
        const float dl = __fmul_rn(f16(b + 80u), static_cast<float>(sc & 15u));
        const float ml = __fmul_rn(f16(b + 82u), static_cast<float>(sc >> 4));
        return __fsub_rn(__fmul_rn(dl, static_cast<float>(q)), ml);
    } else if constexpr (T == GgmlType::Q3_K) {  // hmask[32] qs[64] scales[12] d
        const uint8_t* b = row + (c >> 3) * QB;
        const uint32_t sub = static_cast<uint32_t>(c & 7u), h = sub >> 2, j = sub & 3u;
        // The 6-bit scale `is` of 16: low 4 bits from bytes 0-7, high 2 bits from bytes 8-11.
        const uint32_t is = h * 8u + j * 2u + (l >> 4), g = is >> 2, k = is & 3u;
        const uint32_t lo = u8(b + 96u + k + ((g & 1u) << 2));
        const uint32_t low = g < 2u ? (lo & 15u) : (lo >> 4);
        const uint32_t high = (u8(b + 104u + k) >> (2u * g)) & 3u;
        const float dl = __fmul_rn(f16(b + 108u), static_cast<float>(static_cast<int32_t>(low | (high << 4)) - 32));
        const uint32_t q = (u8(b + 32u + h * 32u + l) >> (2u * j)) & 3u;
        const bool hi = (u8(b + l) & (1u << (h * 4u + j))) != 0u;
        return __fmul_rn(dl, static_cast<float>(static_cast<int32_t>(q) - (hi ? 0 : 4)));
    } else if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K) {  // d dmin scales[12] (qh[32]) qs[128]
        constexpr uint32_t QS_AT = T == GgmlType::Q4_K ? 16u : 48u;
        const uint8_t* b = row + (c >> 3) * QB;
        const uint32_t sub = static_cast<uint32_t>(c & 7u);
        float sc, m;
        scale_min_k4(b + 4u, sub, sc, m);
        uint32_t q = (u8(b + QS_AT + (sub >> 1) * 32u + l) >> ((sub & 1u) * 4u)) & 15u;
        if constexpr (T == GgmlType::Q5_K) q |= ((u8(b + 16u + l) >> sub) & 1u) << 4;
        const float dl = __fmul_rn(f16(b), sc), ml = __fmul_rn(f16(b + 2u), m);
        return __fsub_rn(__fmul_rn(dl, static_cast<float>(q)), ml);
    } else if constexpr (T == GgmlType::Q6_K) {  // ql[128] qh[64] scales[16] d
        const uint8_t* b = row + (c >> 3) * QB;
        const uint32_t sub = static_cast<uint32_t>(c & 7u), h = sub >> 2, k = sub & 3u;
        const uint32_t ql = (u8(b + h * 64u + l + (k & 1u) * 32u) >> ((k >> 1) * 4u)) & 15u;
        const uint32_t qh = (u8(b + 128u + h * 32u + l) >> (2u * k)) & 3u;
        const float d = __fmul_rn(f16(b + 208u), static_cast<float>(i8(b + 192u + h * 8u + l / 16u + 2u * k)));
        return __fmul_rn(d, static_cast<float>(static_cast<int32_t>(ql | (qh << 4)) - 32));
    } else if constexpr (T == GgmlType::IQ4_NL) {  // d qs[16]
        const uint8_t* b = row + c * QB;
        return __fmul_rn(f16(b), iq4nl_value((u8(b + 2u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u));
    } else if constexpr (T == GgmlType::IQ4_XS) {  // d scales_h scales_l[4] qs[128]
        const uint8_t* b = row + (c >> 3) * QB;
        const uint32_t ib = static_cast<uint32_t>(c & 7u);
        const uint32_t ls = ((u8(b + 4u + ib / 2u) >> (4u * (ib & 1u))) & 15u) | (((u16(b + 2u) >> (2u * ib)) & 3u) << 4);
        const float d = __fmul_rn(f16(b), static_cast<float>(static_cast<int32_t>(ls) - 32));
        return __fmul_rn(d, iq4nl_value((u8(b + 8u + ib * 16u + (l & 15u)) >> ((l >> 4) * 4u)) & 15u));
    } else {
        static_assert(T == GgmlType::F32, "no dequantization for this type");
        return 0.0f;
    }
}

// Elements 128c + 4l .. 128c + 4l + 3 of a row: w[e] = dequant1 of each (the same bits), in
// fewer loads for the common types. Elements e >= n are not read (w[e] = 0).
template <GgmlType T>
__device__ __forceinline__ void dequant4(const uint8_t* row, uint64_t c, uint32_t l, uint32_t n, float (&w)[4]) {
    constexpr uint32_t QB = Traits<T>::bytes;
    if constexpr (T == GgmlType::Q4_0) {
        const uint8_t* b = row + (4u * c + (l >> 3)) * QB;
        const uint32_t i = l & 7u;
        const uint32_t q = u32(b + 2u + 4u * (i & 3u)) >> ((i >> 2) * 4u);  // nibbles of bytes 4(i%4)..+3
        const float d = f16(b);
#pragma unroll
        for (uint32_t e = 0; e < 4u; ++e) w[e] = __fmul_rn(static_cast<float>(static_cast<int32_t>((q >> (8u * e)) & 15u) - 8), d);
    } else if constexpr (T == GgmlType::Q8_0) {
        const uint8_t* b = row + (4u * c + (l >> 3)) * QB;
        const uint32_t q = u32(b + 2u + 4u * (l & 7u));
        const float d = f16(b);
#pragma unroll
        for (uint32_t e = 0; e < 4u; ++e)
            w[e] = __fmul_rn(static_cast<float>(static_cast<int32_t>(static_cast<int8_t>(static_cast<uint8_t>(q >> (8u * e))))), d);
    } else if constexpr (T == GgmlType::Q4_K || T == GgmlType::Q5_K) {
        constexpr uint32_t QS_AT = T == GgmlType::Q4_K ? 16u : 48u;
        const uint64_t k = 128u * c + 4u * l;  // first element
        const uint8_t* b = row + (k >> 8) * QB;
        const uint32_t sub = static_cast<uint32_t>((k >> 5) & 7u), i = static_cast<uint32_t>(k & 31u);
        float sc, m;
        scale_min_k4(b + 4u, sub, sc, m);
        const float dl = __fmul_rn(f16(b), sc), ml = __fmul_rn(f16(b + 2u), m);
        const uint32_t q = u32(b + QS_AT + (sub >> 1) * 32u + i) >> ((sub & 1u) * 4u);
        uint32_t qh = 0;
        if constexpr (T == GgmlType::Q5_K) qh = u32(b + 16u + i) >> sub;
#pragma unroll
        for (uint32_t e = 0; e < 4u; ++e) {
            uint32_t v = (q >> (8u * e)) & 15u;
            if constexpr (T == GgmlType::Q5_K) v |= ((qh >> (8u * e)) & 1u) << 4;
            w[e] = __fsub_rn(__fmul_rn(dl, static_cast<float>(v)), ml);
        }
    } else if constexpr (T == GgmlType::Q6_K) {
        const uint64_t k = 128u * c + 4u * l;
        const uint8_t* b = row + (k >> 8) * QB;
        const uint32_t sub = static_cast<uint32_t>((k >> 5) & 7u), h = sub >> 2, kk = sub & 3u, i = static_cast<uint32_t>(k & 31u);
        const uint32_t ql = u32(b + h * 64u + i + (kk & 1u) * 32u) >> ((kk >> 1) * 4u);
        const uint32_t qh = u32(b + 128u + h * 32u + i) >> (2u * kk);
        const float d = __fmul_rn(f16(b + 208u), static_cast<float>(i8(b + 192u + h * 8u + i / 16u + 2u * kk)));
#pragma unroll
        for (uint32_t e = 0; e < 4u; ++e)
            w[e] = __fmul_rn(d, static_cast<float>(static_cast<int32_t>(((ql >> (8u * e)) & 15u) | (((qh >> (8u * e)) & 3u) << 4)) - 32));
    } else if constexpr (is_float_type<T>) {
#pragma unroll
        for (uint32_t e = 0; e < 4u; ++e) {
            const uint64_t k = 128u * c + 4u * l + e;
            w[e] = e < n ? dequant1<T>(row, k >> 5, static_cast<uint32_t>(k & 31u)) : 0.0f;
        }
    } else {
#pragma unroll
        for (uint32_t e = 0; e < 4u; ++e) {
            const uint64_t k = 128u * c + 4u * l + e;
            w[e] = dequant1<T>(row, k >> 5, static_cast<uint32_t>(k & 31u));
        }
    }
}

}  // namespace pocket::cuda::dq
