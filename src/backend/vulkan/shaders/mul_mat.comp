#version 450
// dst[i3][i2][j][i] = dot(row i of src0 (weights, any TYPE_*), row j of src1 (f32)), with src0
// broadcast over dims 2, 3 as ggml does. With MUL_MAT_ID defined: mul_mat_id (see main).
//
// Every output is summed in one fixed order, whatever the batch size, tile or device: lane l
// (of 32) takes elements 4l..4l+3 of every 128 (4l..4l+3, 128+4l.., ...) and adds their
// products in increasing order with fused multiply-adds; the 32 lane sums are then added by a
// fixed tree (l += l+16, l += l+8, ...). Decode (one column) and prompt batches (tiles of COLS
// columns) therefore give bitwise the same logits. Neighbouring lanes read neighbouring
// weight bytes and activations, so loads coalesce.
//
// A workgroup is 32 lanes x GROUPS row groups; each thread keeps ROWS x COLS sums, so one
// workgroup covers GROUPS*ROWS rows and COLS columns: each weight element is dequantized once
// for COLS columns, each activation loaded once for ROWS rows.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "common.glsl"
#include "dequant.glsl"

layout(constant_id = 0) const uint ROWS = 1;
layout(constant_id = 1) const uint COLS = 1;
// Tree steps below this stride run as subgroup shuffles (0: all through shared memory). A
// shuffle by xor s gives lane l the sum p[l] + p[l ^ s]: for the lanes that go on, the same
// additions as the shared-memory tree, so both paths give the same bits.
layout(constant_id = 2) const uint SHUFFLE_BELOW = 0;
const uint GROUPS = 4u;
const uint LANES = 32u;
const uint MAX_ROWS = 4u, MAX_COLS = 8u;
layout(local_size_x = 128) in;   // LANES * GROUPS

layout(binding = 4) writeonly buffer Dst { float dst[]; };

shared float partial[GROUPS * MAX_ROWS * MAX_COLS][LANES];
#include "lane_tree.glsl"

void main() {
    // Lanes are numbered through the subgroups, so that lanes l and l ^ s (s < subgroup size)
    // share one: the shuffle steps need it, and the numbering is a fixed permutation.
    const uint inv = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint lane = inv % LANES, group = inv / LANES;
    // Shuffles only within the subgroup size this dispatch really got.
    const uint shuffle_below = min(SHUFFLE_BELOW, gl_SubgroupSize);
#if defined(MUL_MAT_ID)
    // mul_mat_id: dst[t][i] = expert ids[t][i] (src0's dim 2) times column i (or 0) of
    // token t's activations; one column per workgroup (COLS = 1), so the order is mul_mat's.
    const uint K = P.ne[0].x, N = P.ne[0].y, M = 1u;
    const uint i = gl_WorkGroupID.y, t = gl_WorkGroupID.z;
    const uint expert = min(uint(SRC2_I(i * P.nb[2].x + t * P.nb[2].y)), P.ne[0].z - 1u);
    const uint row0 = (gl_WorkGroupID.x * GROUPS + group) * ROWS, col0 = 0u;
    const uint w_base = expert * P.nb[0].z;
    const uint x_base = (P.ne[1].y == 1u ? 0u : i) * P.nb[1].y + t * P.nb[1].z;
    const uint d_base = P.offs_d.x + t * P.nb[4].z + i * P.nb[4].y;
#else
    const uint K = P.ne[0].x, N = P.ne[0].y, M = P.ne[1].y;
    const uint i23 = gl_WorkGroupID.z, i2 = i23 % P.ne[1].z, i3 = i23 / P.ne[1].z;
    const uint row0 = (gl_WorkGroupID.x * GROUPS + group) * ROWS, col0 = gl_WorkGroupID.y * COLS;
    const uint w_base = (i2 / (P.ne[1].z / P.ne[0].z)) * P.nb[0].z + (i3 / (P.ne[1].w / P.ne[0].w)) * P.nb[0].w;
    const uint x_base = i2 * P.nb[1].z + i3 * P.nb[1].w;
    const uint d_base = P.offs_d.x + i3 * P.nb[4].w + i2 * P.nb[4].z;
#endif
    const uint n_chunks = (K + 127u) / 128u;

    uint w_row[MAX_ROWS];
    [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) w_row[r] = w_base + min(row0 + r, N - 1u) * P.nb[0].y;
    uint x_col[MAX_COLS];
    [[unroll]] for (uint c = 0u; c < MAX_COLS; ++c) x_col[c] = x_base + min(col0 + c, M - 1u) * P.nb[1].y;

    precise float acc[MAX_ROWS][MAX_COLS];
    [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) [[unroll]] for (uint c = 0u; c < MAX_COLS; ++c) acc[r][c] = 0.0;

    for (uint ch = 0u; ch < n_chunks; ++ch) {
        const uint k = ch * 128u + lane * 4u;
        if (k >= K) break;   // only the end of a float row is partial
        const uint n = min(4u, K - k);
        float xv[MAX_COLS][4];
        [[unroll]] for (uint c = 0u; c < COLS; ++c)
            [[unroll]] for (uint e = 0u; e < 4u; ++e) xv[c][e] = e < n ? SRC1_F(x_col[c] + (k + e) * P.nb[1].x) : 0.0;
        [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
            float w[4];
            dequant4(w_row[r], ch, lane, w);
            [[unroll]] for (uint c = 0u; c < COLS; ++c) {
                precise float s = acc[r][c];
                [[unroll]] for (uint e = 0u; e < 4u; ++e)
                    if (e < n) s = fma(w[e], xv[c][e], s);
                acc[r][c] = s;
            }
        }
    }

    // The fixed tree over lanes, per output of this thread's group.
    [[unroll]] for (uint r = 0u; r < ROWS; ++r)
        [[unroll]] for (uint c = 0u; c < COLS; ++c) partial[(group * ROWS + r) * COLS + c][lane] = acc[r][c];
    lane_tree(lane, group * ROWS * COLS, ROWS * COLS, shuffle_below);
    // Lane k of the group writes output k of its ROWS x COLS tile.
    if (lane < ROWS * COLS) {
        const uint r = lane / COLS, c = lane % COLS;
        const uint row = row0 + r, col = col0 + c;
        if (row < N && col < M)
            dst[(d_base + col * P.nb[4].y + row * 4u) >> 2] =
                partial[(group * ROWS + r) * COLS + c][0];
    }
}
