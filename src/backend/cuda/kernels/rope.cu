// Rotary embedding, as rope.comp: src0 [head_dim, n_head, n_tokens] by positions src1 (i32
// per token), NORM (adjacent pairs) or NEOX (halves), with llama3 frequency factors (src2,
// f32) and YaRN. One thread per rotated pair.
// rope: f32 src0 -> f32 result; dims past n_rot pass through (the pair-0 thread copies them).
// rope_shift: in place on src0 (a cache view, f32 or f16 with packed rows), rotating by src1's
// delta.
// The angle follows the CPU's fill_angles step by step (theta_base advanced by one
// multiplication per pair from the host's theta_scale, no FMA contraction), so it has the
// CPU's bits up to cosf / sinf.
#include "backend/cuda/cuda_ops.hpp"
#include "backend/cuda/kernels/util.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace pocket::cuda {

namespace {

using kern::Geom;

constexpr int kWG = 256;

struct RopeArgs {
    int32_t neox;
    int32_t n_rot;
    int32_t has_ff;
    float theta_scale;   // freq_base^(-2/n_rot), computed on the host as the CPU does
    float freq_scale;
    float ext_factor;
    float attn_factor;
    float yarn_mscale;   // attn_factor * (1 + 0.1 log(1 / freq_scale)), used when ext_factor != 0
    float corr_low, corr_high;
};

// YaRN's corrected dims range, as the CPU's rope computes it.
float yarn_corr_dim(int n_rot, int n_ctx_orig, float n_rotations, float base) {
    return static_cast<float>(n_rot) * std::log(static_cast<float>(n_ctx_orig) / (n_rotations * 2.0f * 3.14159265358979323846f)) /
           (2.0f * std::log(base));
}

template <bool kShift, bool kF16>
__global__ void rope_kernel(const void* src, Geom ga, const void* pos, Geom gp, const void* ff, void* dst, Geom gd, RopeArgs p) {
    const int64_t idx = static_cast<int64_t>(blockIdx.x) * kWG + threadIdx.x;
    const int64_t half_rot = p.n_rot / 2;
    if (idx >= half_rot * ga.ne[1] * ga.ne[2]) return;
    const int64_t pair = idx % half_rot, h = (idx / half_rot) % ga.ne[1], tok = idx / (half_rot * ga.ne[1]);

    float theta_base = static_cast<float>(kern::ld_i32(pos, tok * gp.nb[0]));
    for (int64_t i = 0; i < pair; ++i) theta_base = __fmul_rn(theta_base, p.theta_scale);
    const float extrap = theta_base / (p.has_ff ? kern::ld_f32(ff, pair * 4) : 1.0f);
    const float interp = __fmul_rn(p.freq_scale, extrap);
    float theta = interp, mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) {
        const float y = (static_cast<float>(pair) - p.corr_low) / fmaxf(0.001f, p.corr_high - p.corr_low);
        const float mix = __fmul_rn(1.0f - fminf(1.0f, fmaxf(0.0f, y)), p.ext_factor);
        theta = __fadd_rn(__fmul_rn(interp, 1.0f - mix), __fmul_rn(extrap, mix));
        mscale = p.yarn_mscale;
    }
    const float c = __fmul_rn(cosf(theta), mscale), s = __fmul_rn(sinf(theta), mscale);
    const int64_t ia = p.neox ? pair : 2 * pair, ib = p.neox ? pair + half_rot : 2 * pair + 1;
    const int64_t base = h * ga.nb[1] + tok * ga.nb[2];
    if constexpr (kShift) {
        // In place on src0's memory (dst is src0 here).
        float x0, x1;
        if constexpr (kF16) {
            x0 = kern::ld_f16(dst, base + ia * ga.nb[0]);
            x1 = kern::ld_f16(dst, base + ib * ga.nb[0]);
        } else {
            x0 = kern::ld_f32(dst, base + ia * ga.nb[0]);
            x1 = kern::ld_f32(dst, base + ib * ga.nb[0]);
        }
        const float y0 = __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s));
        const float y1 = __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c));
        if constexpr (kF16) {
            kern::st_f16(dst, base + ia * ga.nb[0], y0);
            kern::st_f16(dst, base + ib * ga.nb[0], y1);
        } else {
            kern::st_f32(dst, base + ia * ga.nb[0], y0);
            kern::st_f32(dst, base + ib * ga.nb[0], y1);
        }
    } else {
        const int64_t dbase = h * gd.nb[1] + tok * gd.nb[2];
        const float x0 = kern::ld_f32(src, base + ia * ga.nb[0]), x1 = kern::ld_f32(src, base + ib * ga.nb[0]);
        kern::st_f32(dst, dbase + ia * gd.nb[0], __fsub_rn(__fmul_rn(x0, c), __fmul_rn(x1, s)));
        kern::st_f32(dst, dbase + ib * gd.nb[0], __fadd_rn(__fmul_rn(x0, s), __fmul_rn(x1, c)));
        if (pair == 0)
            for (int64_t k = p.n_rot; k < ga.ne[0]; ++k) kern::st_f32(dst, dbase + k * gd.nb[0], kern::ld_f32(src, base + k * ga.nb[0]));
    }
}

}  // namespace

void rope(const Tensor& node, const Launch& l) {
    const Tensor* a = node.src[0];
    const Tensor* pos = node.src[1];
    const Tensor* ff = node.src[2];
    const auto rp = node.params<RopeParams>();
    const int64_t n = static_cast<int64_t>(rp.n_rot / 2) * a->ne[1] * a->ne[2];
    if (n <= 0) return;

    RopeArgs p{};
    p.neox = rp.mode == RopeMode::neox ? 1 : 0;
    p.n_rot = rp.n_rot;
    p.has_ff = ff ? 1 : 0;
    p.theta_scale = std::pow(rp.freq_base, -2.0f / static_cast<float>(rp.n_rot));
    p.freq_scale = rp.freq_scale;
    p.ext_factor = rp.ext_factor;
    p.attn_factor = rp.attn_factor;
    float mscale = rp.attn_factor;
    mscale *= 1.0f + 0.1f * std::log(1.0f / rp.freq_scale);
    p.yarn_mscale = mscale;
    const float start = std::floor(yarn_corr_dim(rp.n_rot, rp.n_ctx_orig, rp.beta_fast, rp.freq_base));
    const float end = std::ceil(yarn_corr_dim(rp.n_rot, rp.n_ctx_orig, rp.beta_slow, rp.freq_base));
    p.corr_low = std::max(0.0f, start);
    p.corr_high = std::min(static_cast<float>(rp.n_rot - 1), end);

    const unsigned blocks = kern::blocks_for(n, kWG);
    const void* ffd = ff ? ff->data : nullptr;
    if (node.op == Op::rope) {
        rope_kernel<false, false><<<blocks, kWG, 0, l.stream>>>(a->data, kern::geom(a), pos->data, kern::geom(pos), ffd, node.data,
                                                                kern::geom(&node), p);
    } else if (node.op == Op::rope_shift) {
        // In place on src0 (the node is a view of it).
        if (a->type == GgmlType::F16)
            rope_kernel<true, true><<<blocks, kWG, 0, l.stream>>>(a->data, kern::geom(a), pos->data, kern::geom(pos), ffd, a->data,
                                                                  kern::geom(a), p);
        else
            rope_kernel<true, false><<<blocks, kWG, 0, l.stream>>>(a->data, kern::geom(a), pos->data, kern::geom(pos), ffd, a->data,
                                                                   kern::geom(a), p);
    }
}

}  // namespace pocket::cuda
