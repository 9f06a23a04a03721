// Fused attention, as flash_attn.comp: one (query, head) per block of 32 lanes (one warp), an
// online softmax over blocks of 32 kv cells. q = src0 f32 [d, n_head, n_q]; k = src1, v = src2
// (f32 / f16 / q8_0, one type, packed rows) [d|dv, n_head_kv, n_kv]; mask = src3 f32
// [n_kv, >= n_q] (optional); result f32 [dv, n_head, n_q]. d, dv <= 256.
//
// Fixed order, independent of the batch: lane l scores cell 32b + l (its d products in order,
// fmaf); block maximum and sum by the fixed 32-lane tree; output dim j (owned by lane j % 32)
// accumulates the block's 32 cells in order. Cells masked -inf for this query are never read
// (neither K nor V), and blocks wholly masked are skipped, so garbage beyond the visible
// cells cannot leak in and the result does not depend on how many masked cells the view holds.
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

constexpr int kMaxD = 256;
constexpr int kLanes = 32;

enum class KV : int { f32, f16, q8_0 };

// Element e of the row at byte `row` of a K or V operand.
template <KV kT> __device__ __forceinline__ float kv_at(const void* base, int64_t row, int64_t e) {
    if constexpr (kT == KV::f32) {
        return kern::ld_f32(base, row + 4 * e);
    } else if constexpr (kT == KV::f16) {
        return kern::ld_f16(base, row + 2 * e);
    } else {
        const int64_t blk = row + (e / 32) * 34;
        const float d = kern::ld_f16(base, blk);
        const int8_t q = *reinterpret_cast<const int8_t*>(static_cast<const uint8_t*>(base) + blk + 2 + (e % 32));
        return static_cast<float>(q) * d;
    }
}

// q . (row `krow` of K), its d products added in order e = 0, 1, ... (fmaf). f16 and f32
// rows at 16-byte boundaries are read 16 bytes at a time: the same additions, far fewer loads.
template <KV kT> __device__ __forceinline__ float k_dot(const float* q_s, const void* k, int64_t krow, int64_t d) {
    float dot = 0.0f;
    const uint8_t* row = static_cast<const uint8_t*>(k) + krow;
    if constexpr (kT == KV::f16) {
        if (reinterpret_cast<uintptr_t>(row) % 16 == 0 && d % 8 == 0) {
            for (int64_t e = 0; e < d; e += 8) {
                const uint4 raw = *reinterpret_cast<const uint4*>(row + 2 * e);
                const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float2 f = __half22float2(h[i]);
                    dot = fmaf(q_s[e + 2 * i], f.x, dot);
                    dot = fmaf(q_s[e + 2 * i + 1], f.y, dot);
                }
            }
            return dot;
        }
    } else if constexpr (kT == KV::f32) {
        if (reinterpret_cast<uintptr_t>(row) % 16 == 0 && d % 4 == 0) {
            for (int64_t e = 0; e < d; e += 4) {
                const float4 f = *reinterpret_cast<const float4*>(row + 4 * e);
                dot = fmaf(q_s[e], f.x, dot);
                dot = fmaf(q_s[e + 1], f.y, dot);
                dot = fmaf(q_s[e + 2], f.z, dot);
                dot = fmaf(q_s[e + 3], f.w, dot);
            }
            return dot;
        }
    }
    for (int64_t e = 0; e < d; ++e) dot = fmaf(q_s[e], kv_at<kT>(k, krow, e), dot);
    return dot;
}

struct AttnArgs {
    float scale;
    float softcap;
    int32_t causal;
    int32_t window;
};

template <KV kT>
__global__ void __launch_bounds__(kLanes)
    flash_attn_kernel(const void* q, Geom gq, const void* k, Geom gk, const void* v, Geom gv, const void* mask, Geom gm, void* dst,
                      Geom gd, AttnArgs p) {
    __shared__ float q_s[kMaxD];
    __shared__ float p_s[kLanes];
    const int lane = threadIdx.x;
    const int64_t n_head = gq.ne[1], n_q = gq.ne[2];
    const int64_t h = blockIdx.x % n_head, t = blockIdx.x / n_head;
    const int64_t d = gq.ne[0], dv = gv.ne[0], n_kv = gk.ne[2];
    const int64_t hk = h / (n_head / gk.ne[1]);
    const float ninf = -INFINITY;

    for (int64_t e = lane; e < d; e += kLanes) q_s[e] = kern::ld_f32(q, h * gq.nb[1] + t * gq.nb[2] + e * gq.nb[0]);
    __syncthreads();

    const int64_t mrow = t * gm.nb[1];
    // A layer's sliding window over a mask (gemma2, gemma3): the query sits at the last cell
    // its mask row leaves visible, and sees the `window` cells ending there.
    int64_t window_start = 0;
    if (p.causal == 0 && p.window > 0 && mask != nullptr) {
        int64_t last = -1;
        for (int64_t c = lane; c < n_kv; c += kLanes)
            if (!kern::is_neg_inf(kern::ld_f32(mask, mrow + c * gm.nb[0]))) last = c;  // c grows: the lane's last
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) {
            const int64_t o = __shfl_xor_sync(0xffffffffu, last, s);
            last = o > last ? o : last;
        }
        window_start = last + 1 - p.window;
    }

    float acc[kMaxD / kLanes];
#pragma unroll
    for (int i = 0; i < kMaxD / kLanes; ++i) acc[i] = 0.0f;
    float m = ninf, sum = 0.0f;
    const int64_t pos = n_kv - n_q + t;

    for (int64_t c0 = 0; c0 < n_kv; c0 += kLanes) {
        const int64_t cell = c0 + lane;
        float s = ninf;
        if (cell < n_kv) {
            float mv = mask != nullptr ? kern::ld_f32(mask, mrow + cell * gm.nb[0]) : 0.0f;
            if (p.causal != 0 && (cell > pos || (p.window > 0 && cell <= pos - p.window))) mv = ninf;
            if (cell < window_start) mv = ninf;
            if (!kern::is_neg_inf(mv)) {
                const float dot = k_dot<kT>(q_s, k, hk * gk.nb[1] + cell * gk.nb[2], d);
                s = __fmul_rn(dot, p.scale);
                if (p.softcap > 0.0f) s = __fmul_rn(p.softcap, tanhf(s / p.softcap));
                s += mv;
            }
        }
        const float bmax = kern::warp_reduce<true>(s);
        if (kern::is_neg_inf(bmax)) continue;  // the whole block is masked for this query
        const float m_new = fmaxf(m, bmax);
        const float corr = expf(m - m_new);
        const float pe = expf(s - m_new);
        sum = __fmul_rn(sum, corr) + kern::warp_reduce<false>(pe);
        m = m_new;
        p_s[lane] = pe;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kMaxD / kLanes; ++i) {
            const int64_t j = lane + kLanes * i;
            if (j < dv) {
                float a = __fmul_rn(acc[i], corr);
                for (int c = 0; c < kLanes && c0 + c < n_kv; ++c) {
                    const float pc = p_s[c];
                    if (pc != 0.0f) a = fmaf(pc, kv_at<kT>(v, hk * gv.nb[1] + (c0 + c) * gv.nb[2], j), a);
                }
                acc[i] = a;
            }
        }
        __syncthreads();
    }
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma unroll
    for (int i = 0; i < kMaxD / kLanes; ++i) {
        const int64_t j = lane + kLanes * i;
        if (j < dv) kern::st_f32(dst, h * gd.nb[1] + t * gd.nb[2] + j * gd.nb[0], acc[i] * inv);
    }
}

template <KV kT> void launch(const Tensor& node, unsigned blocks, const AttnArgs& p, const Launch& l) {
    const Tensor* q = node.src[0];
    const Tensor* k = node.src[1];
    const Tensor* v = node.src[2];
    const Tensor* mask = node.src[3];
    flash_attn_kernel<kT><<<blocks, kLanes, 0, l.stream>>>(q->data, kern::geom(q), k->data, kern::geom(k), v->data, kern::geom(v),
                                                           mask ? mask->data : nullptr, kern::geom(mask), node.data, kern::geom(&node), p);
}

}  // namespace

void flash_attn(const Tensor& node, const Launch& l) {
    const Tensor* q = node.src[0];
    const int64_t n = q->ne[1] * q->ne[2];  // (head, query) pairs
    if (n <= 0) return;
    const auto ap = node.params<AttnParams>();
    const AttnArgs p{ap.scale, ap.softcap, ap.causal, ap.window};
    const unsigned blocks = static_cast<unsigned>(n);
    switch (node.src[1]->type) {
        case GgmlType::F32: launch<KV::f32>(node, blocks, p, l); break;
        case GgmlType::F16: launch<KV::f16>(node, blocks, p, l); break;
        case GgmlType::Q8_0: launch<KV::q8_0>(node, blocks, p, l); break;
        default: break;
    }
}

}  // namespace pocket::cuda
