#version 450
// Type-converting copies between f32 / f16 sources and f32 / f16 / q8_0 destinations:
//  SET_ROWS=0 (cont, cpy): row r of src0 goes to row r of dst, rows counted in each one's
//    own shape;
//  SET_ROWS=1 (set_rows, KV cache writes): row r of src1 (f32) goes to row src2[r] of dst.
// One thread per element, or per block of 32 for q8_0 (scale amax/127, rounding half away
// from zero, as the CPU's quantizer).
#include "common.glsl"
layout(local_size_x = 256) in;
#if defined(DST_F32)
layout(binding = 4) writeonly buffer Dst { float dst[]; };
#define PER_THREAD 1u
#else
layout(binding = 4) writeonly buffer Dst { uint16_t dsth[]; };
#if defined(DST_F16)
#define PER_THREAD 1u
#else
#define PER_THREAD 32u
#endif
#endif

#if SET_ROWS == 1
#define SRC 1
#else
#define SRC 0
#endif

float load_src(uint byte) {
#if SET_ROWS == 1
    return SRC1_F(byte);
#elif defined(SRC_F32)
    return SRC0_F(byte);
#else
    return s0_half(byte);
#endif
}

uint row_byte(uint r, uvec4 ne, uvec4 nb) { return (r % ne.y) * nb.y + ((r / ne.y) % ne.z) * nb.z + (r / (ne.y * ne.z)) * nb.w; }

void main() {
    const uint idx = flat_group() * 256u + gl_LocalInvocationID.x;
    const uvec4 sne = P.ne[SRC], snb = P.nb[SRC];
    const uint per_row = sne.x / PER_THREAD;
    if (idx >= per_row * sne.y * sne.z * sne.w) return;
    const uint k = (idx % per_row) * PER_THREAD, r = idx / per_row;
    const uint src = row_byte(r, sne, snb) + k * snb.x;
#if SET_ROWS == 1
    const uvec4 ine = P.ne[2];
    const uint target = uint(SRC2_I((r % ine.x) * P.nb[2].x + (r / ine.x) * P.nb[2].y));
    if (target >= P.ne[4].y) return;
    const uint drow = target * P.nb[4].y;
#else
    const uint drow = row_byte(r, P.ne[4], P.nb[4]);
#endif
#if defined(DST_F32)
    dst[(P.offs_d.x + drow + k * P.nb[4].x) >> 2] = load_src(src);
#elif defined(DST_F16)
    dsth[(P.offs_d.x + drow + k * P.nb[4].x) >> 1] = uint16_t(packHalf2x16(vec2(load_src(src), 0.0)) & 0xFFFFu);
#else
    float v[32];
    float amax = 0.0;
    [[unroll]] for (uint j = 0u; j < 32u; ++j) {
        v[j] = load_src(src + j * snb.x);
        amax = max(amax, abs(v[j]));
    }
    const float d = amax / 127.0, id = d != 0.0 ? 1.0 / d : 0.0;
    const uint out_ = (P.offs_d.x + drow + (k / 32u) * 34u) >> 1;
    dsth[out_] = uint16_t(packHalf2x16(vec2(d, 0.0)) & 0xFFFFu);
    [[unroll]] for (uint j = 0u; j < 16u; ++j) {
        const float a = v[2u * j] * id, b = v[2u * j + 1u] * id;
        const int qa = int(sign(a) * floor(abs(a) + 0.5)), qb = int(sign(b) * floor(abs(b) + 0.5));
        dsth[out_ + 1u + j] = uint16_t((uint(qa) & 0xFFu) | ((uint(qb) & 0xFFu) << 8));
    }
#endif
}
