#version 450
// dst[i3][i2][j][i] = dot(row i of src0 (weights, any TYPE_*), row j of src1 (f32)), with src0
// broadcast over dims 2, 3 as ggml does.
//
// Every output is summed in one fixed order, whatever the batch size, tile or device: the
// row splits into chunks of 32 elements; lane l (of 32) sums chunks l, l+32, l+64, ... in
// increasing order, each chunk's 32 products in order with fused multiply-adds; the 32 lane
// sums are then added in a fixed tree (l += l+16, l += l+8, ...). Decode (one column) and
// prompt batches (tiles of COLS columns) therefore give bitwise the same logits.
//
// A workgroup is 32 lanes x GROUPS row groups; each thread keeps ROWS x COLS sums, so one
// workgroup covers GROUPS*ROWS rows and COLS columns. Each dequantized weight chunk is used
// for COLS columns, each activation chunk for ROWS rows.
#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint ROWS = 1;
layout(constant_id = 1) const uint COLS = 1;
const uint GROUPS = 4u;
const uint LANES = 32u;
layout(local_size_x = 128) in;   // LANES * GROUPS

layout(binding = 4) writeonly buffer Dst { float dst[]; };

shared float partial[GROUPS * 4u * 8u][LANES];   // ROWS * COLS <= 32 sums per thread

void main() {
    const uint lane = gl_LocalInvocationID.x % LANES, group = gl_LocalInvocationID.x / LANES;
    const uint K = P.ne[0].x, N = P.ne[0].y, M = P.ne[1].y;
    const uint i23 = gl_WorkGroupID.z, i2 = i23 % P.ne[1].z, i3 = i23 / P.ne[1].z;
    const uint row0 = (gl_WorkGroupID.x * GROUPS + group) * ROWS, col0 = gl_WorkGroupID.y * COLS;
    // ggml's broadcast: x batches i2 of one weight batch are consecutive (i2 / (x.ne2 / w.ne2)).
    const uint w_base = (i2 / (P.ne[1].z / P.ne[0].z)) * P.nb[0].z + (i3 / (P.ne[1].w / P.ne[0].w)) * P.nb[0].w;
    const uint x_base = i2 * P.nb[1].z + i3 * P.nb[1].w;
    const uint n_chunks = (K + 31u) / 32u;

    precise float acc[4][8];
    [[unroll]] for (uint r = 0u; r < 4u; ++r) [[unroll]] for (uint c = 0u; c < 8u; ++c) acc[r][c] = 0.0;

    for (uint ch = lane; ch < n_chunks; ch += LANES) {
        const uint n = min(32u, K - ch * 32u);
        float xv[8][32];
        [[unroll]] for (uint c = 0u; c < COLS; ++c) {
            const uint col = min(col0 + c, M - 1u);
            const uint xb = x_base + col * P.nb[1].y + ch * 32u * P.nb[1].x;
            [[unroll]] for (uint j = 0u; j < 32u; ++j) xv[c][j] = j < n ? SRC1_F(xb + j * P.nb[1].x) : 0.0;
        }
        [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
            const uint row = min(row0 + r, N - 1u);
            float w[32];
            dequant_chunk(w_base + row * P.nb[0].y, ch, w);
            [[unroll]] for (uint c = 0u; c < COLS; ++c) {
                precise float s = acc[r][c];
                [[unroll]] for (uint j = 0u; j < 32u; ++j)
                    if (j < n) s = fma(w[j], xv[c][j], s);
                acc[r][c] = s;
            }
        }
    }

    // The fixed tree over lanes, per output of this thread's group.
    [[unroll]] for (uint r = 0u; r < ROWS; ++r)
        [[unroll]] for (uint c = 0u; c < COLS; ++c) partial[(group * ROWS + r) * COLS + c][lane] = acc[r][c];
    barrier();
    [[unroll]] for (uint s = LANES / 2u; s > 0u; s >>= 1) {
        if (lane < s)
            [[unroll]] for (uint r = 0u; r < ROWS; ++r)
                [[unroll]] for (uint c = 0u; c < COLS; ++c) {
                    const uint o = (group * ROWS + r) * COLS + c;
                    precise float v = partial[o][lane] + partial[o][lane + s];
                    partial[o][lane] = v;
                }
        barrier();
    }
    // Lane k of the group writes output k of its ROWS x COLS tile.
    if (lane < ROWS * COLS) {
        const uint r = lane / COLS, c = lane % COLS;
        const uint row = row0 + r, col = col0 + c;
        if (row < N && col < M)
            dst[(P.offs_d.x + i3 * P.nb[4].w + i2 * P.nb[4].z + col * P.nb[4].y + row * 4u) >> 2] =
                partial[(group * ROWS + r) * COLS + c][0];
    }
}
