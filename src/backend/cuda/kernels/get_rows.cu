// get_rows: a port of the Vulkan backend's get_rows.comp. dst row (i1, i2, i3) = row
// ids[i1, i2, i3] of src0 (any weight type of dequant.cuh), dequantized to f32 with the CPU's
// expressions; src0's dim 2 follows i2 when it has more than one. One block of 32 threads per
// row, thread l taking element l of each chunk of 32. An id out of [0, src0 ne1) leaves its
// row untouched (the CPU reports an error).
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/dequant.cuh"
#include "pocket/tensor.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace pocket::cuda {

namespace {

struct RowsArgs {
    const uint8_t* src = nullptr;  // src0
    const uint8_t* ids = nullptr;  // src1 (i32)
    uint8_t* dst = nullptr;        // f32
    int64_t n_rows = 0;            // dst rows: ne1 * ne2 * ne3
    int64_t ne0 = 0, ne1 = 0, ne2 = 0;  // dst
    int64_t src_ne1 = 0, src_ne2 = 0, src_nb1 = 0, src_nb2 = 0;
    int64_t ids_nb0 = 0, ids_nb1 = 0, ids_nb2 = 0;
    int64_t d_nb0 = 0, d_nb1 = 0, d_nb2 = 0, d_nb3 = 0;
};

template <GgmlType T>
__global__ void __launch_bounds__(32) get_rows_kernel(const RowsArgs a) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) + static_cast<int64_t>(blockIdx.y) * gridDim.x;
    if (r >= a.n_rows) return;
    const uint32_t lane = threadIdx.x;
    const int64_t i1 = r % a.ne1, i2 = (r / a.ne1) % a.ne2, i3 = r / (a.ne1 * a.ne2);
    const int32_t id = *reinterpret_cast<const int32_t*>(a.ids + i1 * a.ids_nb0 + i2 * a.ids_nb1 + i3 * a.ids_nb2);
    if (id < 0 || id >= a.src_ne1) return;
    const uint8_t* row = a.src + static_cast<int64_t>(id) * a.src_nb1 + (a.src_ne2 > 1 ? i2 * a.src_nb2 : 0);
    uint8_t* d = a.dst + i1 * a.d_nb1 + i2 * a.d_nb2 + i3 * a.d_nb3;
    for (int64_t ch = 0; ch * 32 + lane < a.ne0; ++ch)
        *reinterpret_cast<float*>(d + (ch * 32 + lane) * a.d_nb0) = dq::dequant1<T>(row, static_cast<uint64_t>(ch), lane);
}

template <GgmlType T>
void launch(const RowsArgs& a, cudaStream_t stream) {
    // A 2-D grid of blocks covering n_rows (up to 65535 * 65535 rows).
    const int64_t x = std::min<int64_t>(a.n_rows, 65535);
    const int64_t y = (a.n_rows + x - 1) / x;
    get_rows_kernel<T><<<dim3(static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1), 32, 0, stream>>>(a);
}

}  // namespace

void get_rows(const Tensor& node, const Launch& l) {
    const Tensor& src = *node.src[0];
    const Tensor& ids = *node.src[1];
    if (node.nelements() == 0) return;
    RowsArgs a;
    a.src = static_cast<const uint8_t*>(src.data);
    a.ids = static_cast<const uint8_t*>(ids.data);
    a.dst = static_cast<uint8_t*>(node.data);
    a.n_rows = node.nrows();
    a.ne0 = node.ne[0];
    a.ne1 = node.ne[1];
    a.ne2 = node.ne[2];
    a.src_ne1 = src.ne[1];
    a.src_ne2 = src.ne[2];
    a.src_nb1 = static_cast<int64_t>(src.nb[1]);
    a.src_nb2 = static_cast<int64_t>(src.nb[2]);
    a.ids_nb0 = static_cast<int64_t>(ids.nb[0]);
    a.ids_nb1 = static_cast<int64_t>(ids.nb[1]);
    a.ids_nb2 = static_cast<int64_t>(ids.nb[2]);
    a.d_nb0 = static_cast<int64_t>(node.nb[0]);
    a.d_nb1 = static_cast<int64_t>(node.nb[1]);
    a.d_nb2 = static_cast<int64_t>(node.nb[2]);
    a.d_nb3 = static_cast<int64_t>(node.nb[3]);
    switch (src.type) {
#define POCKET_CASE(t) \
    case GgmlType::t: launch<GgmlType::t>(a, l.stream); break;
        POCKET_CASE(F32) POCKET_CASE(F16) POCKET_CASE(BF16) POCKET_CASE(Q4_0) POCKET_CASE(Q4_1) POCKET_CASE(Q5_0)
        POCKET_CASE(Q5_1) POCKET_CASE(Q8_0) POCKET_CASE(Q2_K) POCKET_CASE(Q3_K) POCKET_CASE(Q4_K) POCKET_CASE(Q5_K)
        POCKET_CASE(Q6_K) POCKET_CASE(IQ4_NL) POCKET_CASE(IQ4_XS)
#undef POCKET_CASE
        default: throw std::logic_error("cuda get_rows: unsupported type");
    }
}

}  // namespace pocket::cuda
