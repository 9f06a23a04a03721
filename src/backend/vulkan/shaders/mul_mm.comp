#version 450
// The prompt-size product (many columns): dst[i3][i2][j][i] = dot(row i of src0, row j of
// src1), as mul_mat.comp, through shared-memory tiles.
//
// A workgroup computes a tile of BM rows x BN columns. For each chunk of 128 elements of the
// dot products it first stages the chunk of every tile row, dequantized once, and of every
// tile column in shared memory; then each thread (lane l of 32, group g of 4) multiplies its
// ROWS x COLS block from there. Every weight is thus dequantized once per BN columns and every
// activation loaded from memory once per BM rows (mul_mat.comp: once per 8 columns, and once
// per 4 rows).
//
// The order of every sum is mul_mat.comp's: lane l adds the products of elements
// 4l..4l+3 of every 128 in increasing order with fused multiply-adds, then the 32 lane sums
// meet in the same fixed tree. A token's logits are therefore bitwise the same whichever
// shader its batch ran through.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : enable
#include "common.glsl"
#include "dequant.glsl"

// Tree steps below this stride run as subgroup shuffles (see mul_mat.comp).
layout(constant_id = 2) const uint SHUFFLE_BELOW = 0;
const uint LANES = 32u, GROUPS = 4u;
const uint ROWS = 4u, COLS = 8u;            // each thread's block
const uint GR = 2u, GC = 2u;                // the groups as a 2 x 2 grid of blocks
const uint BM = GR * ROWS, BN = GC * COLS;  // the workgroup's tile: 8 rows x 16 columns
layout(local_size_x = 128) in;              // LANES * GROUPS

layout(binding = 4) writeonly buffer Dst { float dst[]; };

// 28 KiB in all, within the 32 KiB every Vulkan device offers.
shared vec4 w_tile[BM][LANES];              // the chunk of each tile row: lane l's four weights at [r][l]
shared vec4 x_tile[BN][LANES];              // the chunk of each tile column
shared float partial[BM * BN][LANES];       // lane sums of every output, for the tree
#include "lane_tree.glsl"

void main() {
    const uint inv = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint lane = inv % LANES, group = inv / LANES;
    const uint gr = group / GC, gc = group % GC;
    const uint shuffle_below = min(SHUFFLE_BELOW, gl_SubgroupSize);
    const uint K = P.ne[0].x, N = P.ne[0].y, M = P.ne[1].y;
    const uint i23 = gl_WorkGroupID.z, i2 = i23 % P.ne[1].z, i3 = i23 / P.ne[1].z;
    const uint row_base = gl_WorkGroupID.x * BM, col_base = gl_WorkGroupID.y * BN;
    const uint w_base = (i2 / (P.ne[1].z / P.ne[0].z)) * P.nb[0].z + (i3 / (P.ne[1].w / P.ne[0].w)) * P.nb[0].w;
    const uint x_base = i2 * P.nb[1].z + i3 * P.nb[1].w;
    const uint n_chunks = (K + 127u) / 128u;

    // Staging: group g loads tile rows g, g + 4 and tile columns g, g + 4, g + 8, g + 12, at
    // its lane's place in the chunk (rows and columns past the end repeat the last one).
    uint w_row[BM / GROUPS];
    [[unroll]] for (uint i = 0u; i < BM / GROUPS; ++i)
        w_row[i] = w_base + min(row_base + group + GROUPS * i, N - 1u) * P.nb[0].y;
    uint x_col[BN / GROUPS];
    [[unroll]] for (uint i = 0u; i < BN / GROUPS; ++i)
        x_col[i] = x_base + min(col_base + group + GROUPS * i, M - 1u) * P.nb[1].y;

    precise float acc[ROWS][COLS];
    [[unroll]] for (uint r = 0u; r < ROWS; ++r) [[unroll]] for (uint c = 0u; c < COLS; ++c) acc[r][c] = 0.0;

    for (uint ch = 0u; ch < n_chunks; ++ch) {
        const uint k = ch * 128u + lane * 4u;
        const uint n = k < K ? min(4u, K - k) : 0u;   // only the end of a float row is partial
        [[unroll]] for (uint i = 0u; i < BM / GROUPS; ++i) {
            float w[4] = {0.0, 0.0, 0.0, 0.0};
            if (n > 0u) dequant4(w_row[i], ch, lane, w);
            w_tile[group + GROUPS * i][lane] = vec4(w[0], w[1], w[2], w[3]);
        }
        [[unroll]] for (uint i = 0u; i < BN / GROUPS; ++i) {
            vec4 x = vec4(0.0);
            [[unroll]] for (uint e = 0u; e < 4u; ++e)
                if (e < n) x[e] = SRC1_F(x_col[i] + (k + e) * P.nb[1].x);
            x_tile[group + GROUPS * i][lane] = x;
        }
        barrier();
        [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
            const vec4 w = w_tile[gr * ROWS + r][lane];
            [[unroll]] for (uint c = 0u; c < COLS; ++c) {
                const vec4 x = x_tile[gc * COLS + c][lane];
                precise float s = acc[r][c];
                [[unroll]] for (uint e = 0u; e < 4u; ++e)
                    if (e < n) s = fma(w[e], x[e], s);
                acc[r][c] = s;
            }
        }
        barrier();
    }

    // The fixed tree over lanes, exactly as mul_mat.comp.
    [[unroll]] for (uint r = 0u; r < ROWS; ++r)
        [[unroll]] for (uint c = 0u; c < COLS; ++c) partial[(group * ROWS + r) * COLS + c][lane] = acc[r][c];
    lane_tree(lane, group * ROWS * COLS, ROWS * COLS, shuffle_below);
    // Lane k of the group writes output k of its block.
    const uint r = lane / COLS, c = lane % COLS;
    const uint row = row_base + gr * ROWS + r, col = col_base + gc * COLS + c;
    if (row < N && col < M)
        dst[(P.offs_d.x + i3 * P.nb[4].w + i2 * P.nb[4].z + col * P.nb[4].y + row * 4u) >> 2] =
            partial[(group * ROWS + r) * COLS + c][0];
}
