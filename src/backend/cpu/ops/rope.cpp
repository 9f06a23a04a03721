// Rotary position embedding (NORM: adjacent pairs, NEOX: halves), with llama3 per-pair
// frequency factors and YaRN, following ggml's formulas; and the in-place shift of cached keys.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/ops.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace pocket::cpu {

namespace {

// The rotary dims' index range over which YaRN blends interpolation into extrapolation.
struct CorrDims {
    float low, high;
};

float yarn_corr_dim(int n_rot, int n_ctx_orig, float n_rotations, float base) {
    return static_cast<float>(n_rot) *
           std::log(static_cast<float>(n_ctx_orig) / (n_rotations * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(base));
}

CorrDims yarn_corr_dims(const RopeParams& p) {
    const float start = std::floor(yarn_corr_dim(p.n_rot, p.n_ctx_orig, p.beta_fast, p.freq_base));
    const float end = std::ceil(yarn_corr_dim(p.n_rot, p.n_ctx_orig, p.beta_slow, p.freq_base));
    return {std::max(0.0f, start), std::min(static_cast<float>(p.n_rot - 1), end)};
}

float yarn_ramp(CorrDims c, int64_t pair) {
    const float y = (static_cast<float>(pair) - c.low) / std::max(0.001f, c.high - c.low);
    return 1.0f - std::min(1.0f, std::max(0.0f, y));
}

// cos/sin for each pair of one position, into cs[2*i], cs[2*i+1].
void fill_angles(const RopeParams& p, CorrDims corr, const float* freq_factors, float pos, float* cs) {
    const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_rot));
    float theta_base = pos;  // pos * base^(-2i/n_rot), advanced by one multiplication per pair, as ggml
    for (int64_t i = 0; i < p.n_rot / 2; ++i) {
        const float extrap = theta_base / (freq_factors ? freq_factors[i] : 1.0f);
        const float interp = p.freq_scale * extrap;
        float theta = interp;
        float mscale = p.attn_factor;
        if (p.ext_factor != 0.0f) {
            const float mix = yarn_ramp(corr, i) * p.ext_factor;
            theta = interp * (1.0f - mix) + extrap * mix;
            mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
        }
        cs[2 * i] = std::cos(theta) * mscale;
        cs[2 * i + 1] = std::sin(theta) * mscale;
        theta_base *= theta_scale;
    }
}

// Rotates one head's row of f32 values in place (x holds ne0 values; only n_rot rotate).
void rotate(const RopeParams& p, const float* cs, float* x) {
    const int64_t half = p.n_rot / 2;
    for (int64_t i = 0; i < half; ++i) {
        const int64_t a = p.mode == RopeMode::neox ? i : 2 * i;
        const int64_t b = p.mode == RopeMode::neox ? i + half : 2 * i + 1;
        const float x0 = x[a], x1 = x[b];
        x[a] = x0 * cs[2 * i] - x1 * cs[2 * i + 1];
        x[b] = x0 * cs[2 * i + 1] + x1 * cs[2 * i];
    }
}

// Shared loop: each thread takes whole tokens (all heads share one angle table).
template <class RowFn> void rope_rows(const OpContext& ctx, Tensor& dst, const Tensor& a, RowFn row_fn) {
    const auto p = dst.params<RopeParams>();
    const Tensor& pos = *dst.src[1];
    const Tensor* ff = dst.src[2];
    const CorrDims corr = yarn_corr_dims(p);
    const size_t cs_bytes = static_cast<size_t>(p.n_rot) * sizeof(float);
    float* cs = ctx.thread_scratch<float>(cs_bytes + static_cast<size_t>(a.ne[0]) * sizeof(float));
    float* row = cs + p.n_rot;
    const auto [t0, t1] = ctx.range(a.ne[2]);
    for (int64_t t = t0; t < t1; ++t) {
        const int32_t position = *static_cast<const int32_t*>(pos.element(t));
        fill_angles(p, corr, ff ? static_cast<const float*>(ff->data) : nullptr, static_cast<float>(position), cs);
        for (int64_t h = 0; h < a.ne[1]; ++h) row_fn(p, cs, row, h, t);
    }
}

}  // namespace

size_t rope_work_size(const Tensor& node, int nth) {
    const auto p = node.params<RopeParams>();
    return per_thread_bytes(static_cast<size_t>(p.n_rot + node.ne[0]) * sizeof(float), nth);
}

void op_rope(const OpContext& ctx, Tensor& dst) {
    const Tensor& a = *dst.src[0];
    rope_rows(ctx, dst, a, [&](const RopeParams& p, const float* cs, float* row, int64_t h, int64_t t) {
        const auto* src = static_cast<const uint8_t*>(a.element(0, h, t));
        for (int64_t i = 0; i < a.ne[0]; ++i) row[i] = *reinterpret_cast<const float*>(src + i * a.nb[0]);
        rotate(p, cs, row);
        std::memcpy(dst.element(0, h, t), row, static_cast<size_t>(a.ne[0]) * sizeof(float));
    });
}

void op_rope_shift(const OpContext& ctx, Tensor& dst) {
    Tensor& k = *dst.src[0];
    rope_rows(ctx, dst, k, [&](const RopeParams& p, const float* cs, float* row, int64_t h, int64_t t) {
        void* cell = k.element(0, h, t);
        row_to_f32(k.type, cell, row, k.ne[0]);
        rotate(p, cs, row);
        row_from_f32(k.type, row, cell, k.ne[0]);
    });
}

}  // namespace pocket::cpu
