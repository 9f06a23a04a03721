// mul_mat and mul_mat_id: a port of the Vulkan backend's mul_mat.comp (one column, or a few
// columns per thread), mul_mm.comp (shared-memory tiles for 16 columns and more) and their
// lane tree (lane_tree.glsl), in the same summation order, so that every output is bitwise the
// same whichever kernel its batch ran through:
//
//   dst[i3][i2][j][i] = dot(row i of src0 (any weight type of dequant.cuh), row j of src1 (f32)),
//   src0 broadcast over dims 2, 3 as the CPU does.
//
// Lane l (of 32) takes elements 4l..4l+3 of every 128 of the dot product and adds their
// products in increasing order with fused multiply-adds; the 32 lane sums are then added by a
// fixed butterfly (xor 16, 8, 4, 2, 1), the shuffle form of the Vulkan tree with the same
// additions. A block is 128 threads = 4 warps ("groups") of 32 lanes.
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/dequant.cuh"
#include "pocket/tensor.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>

namespace pocket::cuda {

namespace {

constexpr uint32_t kLanes = 32;
constexpr uint32_t kGroups = 4;
constexpr uint32_t kThreads = kLanes * kGroups;

struct MatArgs {
    const uint8_t* w = nullptr;    // src0
    const uint8_t* x = nullptr;    // src1 (f32)
    uint8_t* d = nullptr;          // dst (f32)
    const uint8_t* ids = nullptr;  // mul_mat_id: src2 (i32)
    int64_t K = 0, N = 0, M = 0;   // dot length (src0 ne0), rows (src0 ne1), columns (src1 ne1)
    int64_t w_nb1 = 0, w_nb2 = 0, w_nb3 = 0;
    int64_t x_nb0 = 0, x_nb1 = 0, x_nb2 = 0, x_nb3 = 0;
    int64_t d_nb0 = 0, d_nb1 = 0, d_nb2 = 0, d_nb3 = 0;
    int64_t x_ne1 = 1, x_ne2 = 1;  // src1's dims 1, 2
    int64_t r2 = 1, r3 = 1;        // mul_mat: src1 ne2 / src0 ne2, src1 ne3 / src0 ne3
    int64_t n_expert = 1;          // mul_mat_id: src0 ne2
    int64_t ids_nb0 = 0, ids_nb1 = 0;
};

__device__ __forceinline__ float load_f32(const uint8_t* p) { return *reinterpret_cast<const float*>(p); }

// The fixed tree over the 32 lanes of a warp: afterwards every lane holds the sum (the two
// lanes of a pair add the same two values, so all lanes end with the same bits). Every lane
// of the warp must call it.
__device__ __forceinline__ float lane_sum(float v) {
#pragma unroll
    for (int s = static_cast<int>(kLanes / 2); s > 0; s >>= 1) v = __fadd_rn(v, __shfl_xor_sync(0xffffffffu, v, s));
    return v;
}

// mul_mat.comp: each thread keeps ROWS x COLS sums; a block covers kGroups * ROWS rows and COLS
// columns. Grid: (ceil(N / (4 ROWS)), ceil(M / COLS), ne12 * ne13). With ID (mul_mat_id,
// COLS = 1): grid (ceil(N / (4 ROWS)), n_used, n_tokens); dst[t][i] = expert ids[t][i]
// times column i (or 0 when src1 has one) of token t.
template <GgmlType T, uint32_t ROWS, uint32_t COLS, bool ID>
__global__ void __launch_bounds__(kThreads) mul_mat_vec_kernel(const MatArgs a) {
    const uint32_t lane = threadIdx.x % kLanes, group = threadIdx.x / kLanes;
    const int64_t K = a.K, N = a.N;
    int64_t M, row0, col0;
    const uint8_t* wb;
    const uint8_t* xb;
    uint8_t* db;
    if constexpr (ID) {
        static_assert(COLS == 1, "mul_mat_id takes one column per block");
        const int64_t i = blockIdx.y, t = blockIdx.z;
        const int32_t id = *reinterpret_cast<const int32_t*>(a.ids + i * a.ids_nb0 + t * a.ids_nb1);
        const uint32_t expert = min(static_cast<uint32_t>(id), static_cast<uint32_t>(a.n_expert - 1));
        M = 1;
        row0 = (static_cast<int64_t>(blockIdx.x) * kGroups + group) * ROWS;
        col0 = 0;
        wb = a.w + static_cast<int64_t>(expert) * a.w_nb2;
        xb = a.x + (a.x_ne1 == 1 ? 0 : i) * a.x_nb1 + t * a.x_nb2;
        db = a.d + t * a.d_nb2 + i * a.d_nb1;
    } else {
        const int64_t i23 = blockIdx.z, i2 = i23 % a.x_ne2, i3 = i23 / a.x_ne2;
        M = a.M;
        row0 = (static_cast<int64_t>(blockIdx.x) * kGroups + group) * ROWS;
        col0 = static_cast<int64_t>(blockIdx.y) * COLS;
        wb = a.w + (i2 / a.r2) * a.w_nb2 + (i3 / a.r3) * a.w_nb3;
        xb = a.x + i2 * a.x_nb2 + i3 * a.x_nb3;
        db = a.d + i3 * a.d_nb3 + i2 * a.d_nb2;
    }

    const uint8_t* w_row[ROWS];
#pragma unroll
    for (uint32_t r = 0; r < ROWS; ++r) w_row[r] = wb + min(row0 + r, N - 1) * a.w_nb1;
    const uint8_t* x_col[COLS];
#pragma unroll
    for (uint32_t c = 0; c < COLS; ++c) x_col[c] = xb + (ID ? 0 : min(col0 + c, M - 1) * a.x_nb1);

    float acc[ROWS][COLS];
#pragma unroll
    for (uint32_t r = 0; r < ROWS; ++r)
#pragma unroll
        for (uint32_t c = 0; c < COLS; ++c) acc[r][c] = 0.0f;

    // The chunks holding this lane's elements (only the end of a float row is partial). A
    // loop without an exit in its body, unrolled, so that several chunks' loads are in flight
    // at once (a decode product waits on memory); the sums still run chunk after chunk.
    const int64_t my_chunks = K > static_cast<int64_t>(lane) * 4 ? (K - static_cast<int64_t>(lane) * 4 + 127) / 128 : 0;
    // Activations read 16 bytes at a time where their rows allow it (the usual case).
    bool x_vec = a.x_nb0 == 4;
#pragma unroll
    for (uint32_t c = 0; c < COLS; ++c) x_vec = x_vec && reinterpret_cast<uintptr_t>(x_col[c]) % 16 == 0;
#pragma unroll(COLS == 1 ? 8 : 2)
    for (int64_t ch = 0; ch < my_chunks; ++ch) {
        const int64_t k = ch * 128 + lane * 4;
        // Quantized rows hold whole blocks of 32: all four elements are in the row.
        const uint32_t n = dq::is_float_type<T> ? static_cast<uint32_t>(K - k < 4 ? K - k : 4) : 4u;
        float xv[COLS][4];
#pragma unroll
        for (uint32_t c = 0; c < COLS; ++c) {
            if (x_vec && n == 4) {
                const float4 x4 = *reinterpret_cast<const float4*>(x_col[c] + k * 4);
                xv[c][0] = x4.x, xv[c][1] = x4.y, xv[c][2] = x4.z, xv[c][3] = x4.w;
            } else {
#pragma unroll
                for (uint32_t e = 0; e < 4; ++e) xv[c][e] = e < n ? load_f32(x_col[c] + (k + e) * a.x_nb0) : 0.0f;
            }
        }
#pragma unroll
        for (uint32_t r = 0; r < ROWS; ++r) {
            float w[4];
            dq::dequant4<T>(w_row[r], static_cast<uint64_t>(ch), lane, n, w);
#pragma unroll
            for (uint32_t c = 0; c < COLS; ++c) {
                float s = acc[r][c];
#pragma unroll
                for (uint32_t e = 0; e < 4; ++e)
                    if (e < n) s = __fmaf_rn(w[e], xv[c][e], s);
                acc[r][c] = s;
            }
        }
    }

    // The fixed tree over lanes, per output of this warp; lane o keeps output o.
    float out = 0.0f;
#pragma unroll
    for (uint32_t r = 0; r < ROWS; ++r)
#pragma unroll
        for (uint32_t c = 0; c < COLS; ++c) {
            const float v = lane_sum(acc[r][c]);
            if (lane == r * COLS + c) out = v;
        }
    if (lane < ROWS * COLS) {
        const uint32_t r = lane / COLS, c = lane % COLS;
        const int64_t row = row0 + r, col = col0 + c;
        if (row < N && col < M) *reinterpret_cast<float*>(db + col * a.d_nb1 + row * a.d_nb0) = out;
    }
}

// mul_mm.comp's tiles: a block computes BM = GR * 4 rows x BN = GC * 8 columns; its GR x GC
// warps each own 4 x 8 of them. For each chunk of 128 elements the chunk of every tile row
// (dequantized once) and of every tile column is staged in shared memory. Grid:
// (ceil(N / BM), ceil(M / BN), ne12 * ne13). The order of every sum is mul_mat_vec_kernel's,
// whatever the tile's shape. (Measured on an H200, 1B Q4_0 pp512: 2 x 2 warps (8 x 16) 205 ms
// of products, 8 x 1 warps (32 x 8) 223 ms.)
template <GgmlType T, uint32_t GR, uint32_t GC>
__global__ void __launch_bounds__(kLanes * GR * GC) mul_mm_kernel(const MatArgs a) {
    constexpr uint32_t ROWS = 4, COLS = 8, NW = GR * GC;
    constexpr uint32_t BM = GR * ROWS, BN = GC * COLS;
    static_assert(BM % NW == 0 && BN % NW == 0, "each warp stages whole rows and columns");
    __shared__ float4 w_tile[BM][kLanes];  // the chunk of each tile row: lane l's four weights at [r][l]
    __shared__ float4 x_tile[BN][kLanes];  // the chunk of each tile column

    const uint32_t lane = threadIdx.x % kLanes, group = threadIdx.x / kLanes;
    const uint32_t gr = group / GC, gc = group % GC;
    const int64_t K = a.K, N = a.N, M = a.M;
    const int64_t i23 = blockIdx.z, i2 = i23 % a.x_ne2, i3 = i23 / a.x_ne2;
    const int64_t row_base = static_cast<int64_t>(blockIdx.x) * BM, col_base = static_cast<int64_t>(blockIdx.y) * BN;
    const uint8_t* wb = a.w + (i2 / a.r2) * a.w_nb2 + (i3 / a.r3) * a.w_nb3;
    const uint8_t* xb = a.x + i2 * a.x_nb2 + i3 * a.x_nb3;
    uint8_t* db = a.d + i3 * a.d_nb3 + i2 * a.d_nb2;
    const int64_t n_chunks = (K + 127) / 128;

    // Staging: warp g loads tile rows g, g + NW, ... and tile columns g, g + NW, ..., at
    // its lane's place in the chunk (rows and columns past the end repeat the last one).
    const uint8_t* w_row[BM / NW];
#pragma unroll
    for (uint32_t i = 0; i < BM / NW; ++i) w_row[i] = wb + min(row_base + group + NW * i, N - 1) * a.w_nb1;
    const uint8_t* x_col[BN / NW];
#pragma unroll
    for (uint32_t i = 0; i < BN / NW; ++i) x_col[i] = xb + min(col_base + group + NW * i, M - 1) * a.x_nb1;

    float acc[ROWS][COLS];
#pragma unroll
    for (uint32_t r = 0; r < ROWS; ++r)
#pragma unroll
        for (uint32_t c = 0; c < COLS; ++c) acc[r][c] = 0.0f;

    for (int64_t ch = 0; ch < n_chunks; ++ch) {
        const int64_t k = ch * 128 + lane * 4;
        const uint32_t n = k < K ? static_cast<uint32_t>(K - k < 4 ? K - k : 4) : 0u;  // only the end of a float row is partial
#pragma unroll
        for (uint32_t i = 0; i < BM / NW; ++i) {
            float w[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (n > 0) dq::dequant4<T>(w_row[i], static_cast<uint64_t>(ch), lane, n, w);
            w_tile[group + NW * i][lane] = make_float4(w[0], w[1], w[2], w[3]);
        }
#pragma unroll
        for (uint32_t i = 0; i < BN / NW; ++i) {
            float x[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (uint32_t e = 0; e < 4; ++e)
                if (e < n) x[e] = load_f32(x_col[i] + (k + e) * a.x_nb0);
            x_tile[group + NW * i][lane] = make_float4(x[0], x[1], x[2], x[3]);
        }
        __syncthreads();
#pragma unroll
        for (uint32_t r = 0; r < ROWS; ++r) {
            const float4 w4 = w_tile[gr * ROWS + r][lane];
            const float w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
            for (uint32_t c = 0; c < COLS; ++c) {
                const float4 x4 = x_tile[gc * COLS + c][lane];
                const float x[4] = {x4.x, x4.y, x4.z, x4.w};
                float s = acc[r][c];
#pragma unroll
                for (uint32_t e = 0; e < 4; ++e)
                    if (e < n) s = __fmaf_rn(w[e], x[e], s);
                acc[r][c] = s;
            }
        }
        __syncthreads();
    }

    // The fixed tree over lanes, exactly as mul_mat_vec_kernel; lane o keeps output o.
    float out = 0.0f;
#pragma unroll
    for (uint32_t r = 0; r < ROWS; ++r)
#pragma unroll
        for (uint32_t c = 0; c < COLS; ++c) {
            const float v = lane_sum(acc[r][c]);
            if (lane == r * COLS + c) out = v;
        }
    const uint32_t r = lane / COLS, c = lane % COLS;
    const int64_t row = row_base + gr * ROWS + r, col = col_base + gc * COLS + c;
    if (row < N && col < M) *reinterpret_cast<float*>(db + col * a.d_nb1 + row * a.d_nb0) = out;
}

// Products with at least this many columns run through the tiles (8 rows x 16 columns).
constexpr int64_t kTiledMinColumns = 16;

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

template <GgmlType T>
void launch_mul_mat(const MatArgs& a, uint32_t n_planes, cudaStream_t stream) {
    if (a.M >= kTiledMinColumns) {
        mul_mm_kernel<T, 2, 2><<<dim3(ceil_div(a.N, 8), ceil_div(a.M, 16), n_planes), kLanes * 4, 0, stream>>>(a);
    } else if (a.M == 1) {
        // One row per warp: a decode step's product is a few thousand rows, and only many
        // warps in flight keep the memory busy (4 rows per warp left 4 warps per SM on an H200).
        mul_mat_vec_kernel<T, 1, 1, false><<<dim3(ceil_div(a.N, 4), 1, n_planes), kThreads, 0, stream>>>(a);
    } else {
        mul_mat_vec_kernel<T, 4, 8, false><<<dim3(ceil_div(a.N, 16), ceil_div(a.M, 8), n_planes), kThreads, 0, stream>>>(a);
    }
}

template <GgmlType T>
void launch_mul_mat_id(const MatArgs& a, uint32_t n_used, uint32_t n_tokens, cudaStream_t stream) {
    mul_mat_vec_kernel<T, 1, 1, true><<<dim3(ceil_div(a.N, 4), n_used, n_tokens), kThreads, 0, stream>>>(a);
}

#define POCKET_CUDA_WEIGHT_TYPES(X) \
    X(F32) X(F16) X(BF16) X(Q4_0) X(Q4_1) X(Q5_0) X(Q5_1) X(Q8_0) X(Q2_K) X(Q3_K) X(Q4_K) X(Q5_K) X(Q6_K) X(IQ4_NL) X(IQ4_XS)

void describe(MatArgs& a, const Tensor& node) {
    const Tensor& w = *node.src[0];
    const Tensor& x = *node.src[1];
    a.w = static_cast<const uint8_t*>(w.data);
    a.x = static_cast<const uint8_t*>(x.data);
    a.d = static_cast<uint8_t*>(node.data);
    a.K = w.ne[0];
    a.N = w.ne[1];
    a.M = x.ne[1];
    a.w_nb1 = static_cast<int64_t>(w.nb[1]);
    a.w_nb2 = static_cast<int64_t>(w.nb[2]);
    a.w_nb3 = static_cast<int64_t>(w.nb[3]);
    a.x_nb0 = static_cast<int64_t>(x.nb[0]);
    a.x_nb1 = static_cast<int64_t>(x.nb[1]);
    a.x_nb2 = static_cast<int64_t>(x.nb[2]);
    a.x_nb3 = static_cast<int64_t>(x.nb[3]);
    a.d_nb0 = static_cast<int64_t>(node.nb[0]);
    a.d_nb1 = static_cast<int64_t>(node.nb[1]);
    a.d_nb2 = static_cast<int64_t>(node.nb[2]);
    a.d_nb3 = static_cast<int64_t>(node.nb[3]);
    a.x_ne1 = x.ne[1];
    a.x_ne2 = x.ne[2];
}

}  // namespace

void mul_mat(const Tensor& node, const Launch& l) {
    const Tensor& w = *node.src[0];
    const Tensor& x = *node.src[1];
    if (node.nelements() == 0) return;
    MatArgs a;
    describe(a, node);
    a.r2 = x.ne[2] / w.ne[2];
    a.r3 = x.ne[3] / w.ne[3];
    const uint32_t n_planes = static_cast<uint32_t>(x.ne[2] * x.ne[3]);
    switch (w.type) {
#define POCKET_CASE(t) \
    case GgmlType::t: launch_mul_mat<GgmlType::t>(a, n_planes, l.stream); break;
        POCKET_CUDA_WEIGHT_TYPES(POCKET_CASE)
#undef POCKET_CASE
        default: throw std::logic_error("cuda mul_mat: unsupported weight type");
    }
}

void mul_mat_id(const Tensor& node, const Launch& l) {
    const Tensor& w = *node.src[0];
    const Tensor& ids = *node.src[2];
    if (node.nelements() == 0) return;
    MatArgs a;
    describe(a, node);
    a.ids = static_cast<const uint8_t*>(ids.data);
    a.ids_nb0 = static_cast<int64_t>(ids.nb[0]);
    a.ids_nb1 = static_cast<int64_t>(ids.nb[1]);
    a.n_expert = w.ne[2];
    const uint32_t n_used = static_cast<uint32_t>(node.ne[1]), n_tokens = static_cast<uint32_t>(node.ne[2]);
    switch (w.type) {
#define POCKET_CASE(t) \
    case GgmlType::t: launch_mul_mat_id<GgmlType::t>(a, n_used, n_tokens, l.stream); break;
        POCKET_CUDA_WEIGHT_TYPES(POCKET_CASE)
#undef POCKET_CASE
        default: throw std::logic_error("cuda mul_mat_id: unsupported weight type");
    }
}

}  // namespace pocket::cuda
