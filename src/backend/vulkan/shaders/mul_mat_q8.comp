#version 450
// dst[i3][i2][j][i] = dot(row i of src0, row j of src1) for Q4_0 and Q8_0 weights through
// 8-bit integer dot products (VK_KHR_shader_integer_dot_product), on devices that run them
// fast: each 32-element block of an activation column is quantized to 8 bits on the fly
// (scale amax / 127, rounded half away from zero), as the CPU's q8_0 activations are, and multiplied
// with the block's quants four bytes at a time; its integer sum is scaled by both blocks' d.
//
// Order, the same for one column (decode) and for tiles of 8 (prompts), so a token's logits
// do not depend on its batch: lane l of 32 takes blocks l, l + 32, l + 64, ... and adds their
// scaled sums in increasing order with fused multiply-adds; the 32 lane sums meet in the fixed
// tree of lane_tree.glsl. The quantized activations depend on the column alone.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_EXT_spirv_intrinsics : require
#include "common.glsl"

// OpSDot (SPIR-V 4450) of two int32s read as four signed bytes each (PackedVectorFormat4x8Bit
// = 0): Debian 12's glslc predates GL_EXT_integer_dot_product's dotPacked4x8EXT.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int dot4x8(int a, int b, spirv_literal int packed_format);

layout(constant_id = 0) const uint ROWS = 1;
layout(constant_id = 1) const uint COLS = 1;
layout(constant_id = 2) const uint SHUFFLE_BELOW = 0;  // see lane_tree.glsl
const uint GROUPS = 4u;
const uint LANES = 32u;
const uint MAX_ROWS = 4u, MAX_COLS = 8u;
layout(local_size_x = 128) in;   // LANES * GROUPS

#if defined(TYPE_Q4_0)
const uint QBYTES = 18u;   // d (f16), 16 bytes: element i in the low nibble of byte i, i + 16 in the high
#elif defined(TYPE_Q8_0)
const uint QBYTES = 34u;   // d (f16), 32 signed bytes
#else
#error "mul_mat_q8 is for TYPE_Q4_0 and TYPE_Q8_0"
#endif

layout(binding = 4) writeonly buffer Dst { float dst[]; };

shared float partial[GROUPS * MAX_ROWS * MAX_COLS][LANES];
#include "lane_tree.glsl"

// One activation block quantized: eight words of four signed bytes, its scale, and the sum
// of its quants (Q4_0 stores quants + 8, so its dot subtracts 8 * that sum).
struct QBlock {
    int q[8];
    float d;
    int sum;
};

QBlock quantize_block(uint col, uint b) {
    const uint at = col + 32u * b * P.nb[1].x;
    float amax = 0.0;
    for (uint i = 0u; i < 32u; ++i) amax = max(amax, abs(SRC1_F(at + i * P.nb[1].x)));
    // As ggml's q8_0: the inverse from the f32 scale, the scale kept as a half.
    const float d = amax / 127.0, id = d != 0.0 ? 1.0 / d : 0.0;
    QBlock x;
    x.d = unpackHalf2x16(packHalf2x16(vec2(d, 0.0))).x;
    x.sum = 0;
    [[unroll]] for (uint w = 0u; w < 8u; ++w) {
        int word = 0;
        [[unroll]] for (uint e = 0u; e < 4u; ++e) {
            const float y = SRC1_F(at + (4u * w + e) * P.nb[1].x) * id;
            const int v = clamp(int(sign(y) * floor(abs(y) + 0.5)), -127, 127);   // half away from zero
            x.sum += v;
            word |= (v & 0xFF) << (8u * e);
        }
        x.q[w] = word;
    }
    return x;
}

// The integer dot of weight block `wb` (byte offset) with x, and the block's d.
int block_dot(uint wb, QBlock x) {
    int s = 0;
#if defined(TYPE_Q4_0)
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        const uint q = s0_u32(wb + 2u + 4u * k);
        s += dot4x8(int(q & 0x0F0F0F0Fu), x.q[k], 0) + dot4x8(int((q >> 4) & 0x0F0F0F0Fu), x.q[k + 4u], 0);
    }
    s -= 8 * x.sum;
#else
    [[unroll]] for (uint k = 0u; k < 8u; ++k) s += dot4x8(int(s0_u32(wb + 2u + 4u * k)), x.q[k], 0);
#endif
    return s;
}

void main() {
    const uint inv = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint lane = inv % LANES, group = inv / LANES;
    const uint shuffle_below = min(SHUFFLE_BELOW, gl_SubgroupSize);
    const uint K = P.ne[0].x, N = P.ne[0].y, M = P.ne[1].y;
    const uint i23 = gl_WorkGroupID.z, i2 = i23 % P.ne[1].z, i3 = i23 / P.ne[1].z;
    const uint row0 = (gl_WorkGroupID.x * GROUPS + group) * ROWS, col0 = gl_WorkGroupID.y * COLS;
    const uint w_base = (i2 / (P.ne[1].z / P.ne[0].z)) * P.nb[0].z + (i3 / (P.ne[1].w / P.ne[0].w)) * P.nb[0].w;
    const uint x_base = i2 * P.nb[1].z + i3 * P.nb[1].w;

    uint w_row[MAX_ROWS];
    [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) w_row[r] = w_base + min(row0 + r, N - 1u) * P.nb[0].y;
    uint x_col[MAX_COLS];
    [[unroll]] for (uint c = 0u; c < MAX_COLS; ++c) x_col[c] = x_base + min(col0 + c, M - 1u) * P.nb[1].y;

    precise float acc[MAX_ROWS][MAX_COLS];
    [[unroll]] for (uint r = 0u; r < MAX_ROWS; ++r) [[unroll]] for (uint c = 0u; c < MAX_COLS; ++c) acc[r][c] = 0.0;

    for (uint b = lane; b < K / 32u; b += LANES) {
        [[unroll]] for (uint c = 0u; c < COLS; ++c) {
            const QBlock x = quantize_block(x_col[c], b);
            [[unroll]] for (uint r = 0u; r < ROWS; ++r) {
                const uint wb = w_row[r] + b * QBYTES;
                acc[r][c] = fma(float(block_dot(wb, x)), s0_half(wb) * x.d, acc[r][c]);
            }
        }
    }

    [[unroll]] for (uint r = 0u; r < ROWS; ++r)
        [[unroll]] for (uint c = 0u; c < COLS; ++c) partial[(group * ROWS + r) * COLS + c][lane] = acc[r][c];
    lane_tree(lane, group * ROWS * COLS, ROWS * COLS, shuffle_below);
    // Lane k of the group writes output k of its ROWS x COLS tile.
    if (lane < ROWS * COLS) {
        const uint r = lane / COLS, c = lane % COLS;
        const uint row = row0 + r, col = col0 + c;
        if (row < N && col < M)
            dst[(P.offs_d.x + i3 * P.nb[4].w + i2 * P.nb[4].z + col * P.nb[4].y + row * 4u) >> 2] =
                partial[(group * ROWS + r) * COLS + c][0];
    }
}
