// Layout and type changes, as copy.comp, copy_raw.comp and concat.comp:
//  cont, cpy: row r of src0 goes to row r of the destination (rows counted in each one's own
//    shape), f32 / f16 sources of any strides into f32 / f16 / q8_0 (q8_0: packed rows); a
//    same-type copy with packed rows on both sides (any of f32, f16, q8_0) moves the bytes;
//  set_rows: row r of src1 (f32) goes to row src2[r] of src0 (f32 / f16 / q8_0, packed rows);
//  concat: f32 src0 and src1 along dim params<int32_t>().
// One thread per element, or per block of 32 for q8_0: scale amax/127 rounded to f16, values
// x * (1/d) rounded half away from zero (roundf), as the CPU's quantize_row_q8_0.
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

constexpr int kWG = 256;
constexpr int64_t kQK = 32;          // q8_0 elements per block
constexpr int64_t kQ8Bytes = 34;     // f16 scale + 32 int8

enum class T : int { f32, f16, q8_0 };

T type_of(GgmlType t) { return t == GgmlType::F32 ? T::f32 : t == GgmlType::F16 ? T::f16 : T::q8_0; }

// Bytes of one packed row of ne0 elements.
int64_t row_bytes(GgmlType t, int64_t ne0) {
    switch (t) {
        case GgmlType::F32: return 4 * ne0;
        case GgmlType::F16: return 2 * ne0;
        case GgmlType::Q8_0: return ne0 / kQK * kQ8Bytes;
        default: return 0;
    }
}

// Byte offset of row r (counted over dims 1..3) of a tensor.
__device__ __forceinline__ int64_t row_byte(int64_t r, const Geom& g) {
    return (r % g.ne[1]) * g.nb[1] + ((r / g.ne[1]) % g.ne[2]) * g.nb[2] + (r / (g.ne[1] * g.ne[2])) * g.nb[3];
}

template <T kSrc> __device__ __forceinline__ float load(const void* src, int64_t byte) {
    if constexpr (kSrc == T::f32) return kern::ld_f32(src, byte);
    else return kern::ld_f16(src, byte);
}

// One q8_0 block from 32 source values (stride sb bytes) to the block at byte `out`.
template <T kSrc> __device__ __forceinline__ void quantize_block(const void* src, int64_t s, int64_t sb, void* dst, int64_t out) {
    float v[kQK];
    float amax = 0.0f;
#pragma unroll
    for (int j = 0; j < kQK; ++j) {
        v[j] = load<kSrc>(src, s + j * sb);
        amax = fmaxf(amax, fabsf(v[j]));
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint8_t* blk = static_cast<uint8_t*>(dst) + out;
    *reinterpret_cast<__half*>(blk) = __float2half_rn(d);
    int8_t* qs = reinterpret_cast<int8_t*>(blk + 2);
#pragma unroll
    for (int j = 0; j < kQK; ++j) qs[j] = static_cast<int8_t>(static_cast<int>(roundf(__fmul_rn(v[j], id))));
}

// One element (or q8_0 block) from src at byte s (element stride sb) to dst's row at byte
// drow, element k (element stride db).
template <T kSrc, T kDst>
__device__ __forceinline__ void move(const void* src, int64_t s, int64_t sb, void* dst, int64_t drow, int64_t k, int64_t db) {
    if constexpr (kDst == T::q8_0) {
        quantize_block<kSrc>(src, s, sb, dst, drow + (k / kQK) * kQ8Bytes);
    } else if constexpr (kSrc == kDst && kSrc == T::f32) {
        *reinterpret_cast<uint32_t*>(static_cast<uint8_t*>(dst) + drow + k * db) =
            *reinterpret_cast<const uint32_t*>(static_cast<const uint8_t*>(src) + s);
    } else if constexpr (kSrc == kDst && kSrc == T::f16) {
        *reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(dst) + drow + k * db) =
            *reinterpret_cast<const uint16_t*>(static_cast<const uint8_t*>(src) + s);
    } else if constexpr (kDst == T::f32) {
        kern::st_f32(dst, drow + k * db, load<kSrc>(src, s));
    } else {
        kern::st_f16(dst, drow + k * db, load<kSrc>(src, s));
    }
}

// cont / cpy with conversion: row r of src to row r of dst.
template <T kSrc, T kDst> __global__ void convert_kernel(const void* src, Geom gs, void* dst, Geom gd) {
    constexpr int64_t per = kDst == T::q8_0 ? kQK : 1;
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    const int64_t per_row = gs.ne[0] / per;
    if (idx >= per_row * gs.ne[1] * gs.ne[2] * gs.ne[3]) return;
    const int64_t k = (idx % per_row) * per, r = idx / per_row;
    move<kSrc, kDst>(src, row_byte(r, gs) + k * gs.nb[0], gs.nb[0], dst, row_byte(r, gd), k, gd.nb[0]);
}

// Same type, packed rows on both sides: row r's bytes, 16-bit word by word.
__global__ void raw_kernel(const void* src, Geom gs, void* dst, Geom gd, int64_t words) {
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    if (idx >= words * gs.ne[1] * gs.ne[2] * gs.ne[3]) return;
    const int64_t w = idx % words, r = idx / words;
    *reinterpret_cast<uint16_t*>(static_cast<uint8_t*>(dst) + row_byte(r, gd) + 2 * w) =
        *reinterpret_cast<const uint16_t*>(static_cast<const uint8_t*>(src) + row_byte(r, gs) + 2 * w);
}

// set_rows: row r of src (f32) to row idx[r] of dst; rows out of range are skipped.
template <T kDst> __global__ void set_rows_kernel(const void* src, Geom gs, const void* ids, Geom gi, void* dst, Geom gd) {
    constexpr int64_t per = kDst == T::q8_0 ? kQK : 1;
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    const int64_t per_row = gs.ne[0] / per;
    if (idx >= per_row * gs.ne[1] * gs.ne[2] * gs.ne[3]) return;
    const int64_t k = (idx % per_row) * per, r = idx / per_row;
    const int64_t target = kern::ld_i32(ids, (r % gi.ne[0]) * gi.nb[0] + (r / gi.ne[0]) * gi.nb[1]);
    if (target < 0 || target >= gd.ne[1]) return;
    move<T::f32, kDst>(src, row_byte(r, gs) + k * gs.nb[0], gs.nb[0], dst, target * gd.nb[1], k, gd.nb[0]);
}

__global__ void concat_kernel(const void* a, Geom ga, const void* b, Geom gb, void* dst, Geom gd, int dim) {
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    if (idx >= gd.ne[0] * gd.ne[1] * gd.ne[2] * gd.ne[3]) return;
    int64_t c[4];
    c[0] = idx % gd.ne[0];
    c[1] = (idx / gd.ne[0]) % gd.ne[1];
    c[2] = (idx / (gd.ne[0] * gd.ne[1])) % gd.ne[2];
    c[3] = idx / (gd.ne[0] * gd.ne[1] * gd.ne[2]);
    const int64_t out = c[0] * gd.nb[0] + c[1] * gd.nb[1] + c[2] * gd.nb[2] + c[3] * gd.nb[3];
    const void* from = a;
    const Geom* g = &ga;
    if (c[dim] >= ga.ne[dim]) {
        c[dim] -= ga.ne[dim];
        from = b;
        g = &gb;
    }
    kern::st_f32(dst, out, kern::ld_f32(from, c[0] * g->nb[0] + c[1] * g->nb[1] + c[2] * g->nb[2] + c[3] * g->nb[3]));
}

template <T kSrc, T kDst> void launch_convert(const Tensor& src, void* dst_data, const Geom& gd, const Launch& l) {
    constexpr int64_t per = kDst == T::q8_0 ? kQK : 1;
    const int64_t n = src.ne[0] / per * src.nrows();
    if (n <= 0) return;
    convert_kernel<kSrc, kDst><<<kern::blocks_for(n, kWG), kWG, 0, l.stream>>>(src.data, kern::geom(&src), dst_data, gd);
}

template <T kSrc> void launch_convert_from(const Tensor& src, GgmlType dst_type, void* dst_data, const Geom& gd, const Launch& l) {
    switch (type_of(dst_type)) {
        case T::f32: launch_convert<kSrc, T::f32>(src, dst_data, gd, l); break;
        case T::f16: launch_convert<kSrc, T::f16>(src, dst_data, gd, l); break;
        case T::q8_0: launch_convert<kSrc, T::q8_0>(src, dst_data, gd, l); break;
    }
}

// Row r of src into row r of dst (dst_data / gd / dst_type: the destination's memory).
void copy_rows(const Tensor& src, const Tensor& dst_desc, void* dst_data, const Launch& l) {
    const Geom gd = kern::geom(&dst_desc);
    const bool packed_src = static_cast<int64_t>(src.nb[0]) == row_bytes(src.type, src.type == GgmlType::Q8_0 ? kQK : 1);
    const bool packed_dst = static_cast<int64_t>(dst_desc.nb[0]) == row_bytes(dst_desc.type, dst_desc.type == GgmlType::Q8_0 ? kQK : 1);
    if (src.type == dst_desc.type && packed_src && packed_dst) {
        const int64_t words = row_bytes(src.type, src.ne[0]) / 2;
        const int64_t n = words * src.nrows();
        if (n <= 0) return;
        raw_kernel<<<kern::blocks_for(n, kWG), kWG, 0, l.stream>>>(src.data, kern::geom(&src), dst_data, gd, words);
        return;
    }
    if (src.type == GgmlType::F32) launch_convert_from<T::f32>(src, dst_desc.type, dst_data, gd, l);
    else if (src.type == GgmlType::F16) launch_convert_from<T::f16>(src, dst_desc.type, dst_data, gd, l);
}

}  // namespace

void copy(const Tensor& node, const Launch& l) {
    switch (node.op) {
        case Op::cont: copy_rows(*node.src[0], node, node.data, l); break;
        case Op::cpy: copy_rows(*node.src[0], *node.src[1], node.src[1]->data, l); break;
        default: break;
    }
}

void set_rows(const Tensor& node, const Launch& l) {
    const Tensor& target = *node.src[0];
    const Tensor& src = *node.src[1];
    const Tensor& ids = *node.src[2];
    const Geom gs = kern::geom(&src), gi = kern::geom(&ids), gd = kern::geom(&target);
    switch (type_of(target.type)) {
        case T::f32: {
            const int64_t n = src.nelements();
            if (n > 0) set_rows_kernel<T::f32><<<kern::blocks_for(n, kWG), kWG, 0, l.stream>>>(src.data, gs, ids.data, gi, target.data, gd);
            break;
        }
        case T::f16: {
            const int64_t n = src.nelements();
            if (n > 0) set_rows_kernel<T::f16><<<kern::blocks_for(n, kWG), kWG, 0, l.stream>>>(src.data, gs, ids.data, gi, target.data, gd);
            break;
        }
        case T::q8_0: {
            const int64_t n = src.ne[0] / kQK * src.nrows();
            if (n > 0) set_rows_kernel<T::q8_0><<<kern::blocks_for(n, kWG), kWG, 0, l.stream>>>(src.data, gs, ids.data, gi, target.data, gd);
            break;
        }
    }
}

void concat(const Tensor& node, const Launch& l) {
    const int64_t n = node.nelements();
    if (n <= 0) return;
    const int dim = node.params<int32_t>();
    concat_kernel<<<kern::blocks_for(n, kWG), kWG, 0, l.stream>>>(node.src[0]->data, kern::geom(node.src[0]), node.src[1]->data,
                                                                  kern::geom(node.src[1]), node.data, kern::geom(&node), dim);
}

}  // namespace pocket::cuda
