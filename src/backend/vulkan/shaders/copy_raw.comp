#version 450
// cpy / cont between tensors of the same type (a q8_0 cache's cells moved by a context
// shift): row r of src0 to row r of dst, 16-bit word by word (rows are whole blocks).
#include "common.glsl"
layout(local_size_x = 256) in;
layout(binding = 4) writeonly buffer Dst { uint16_t dsth[]; };

uint row_byte(uint r, uvec4 ne, uvec4 nb) { return (r % ne.y) * nb.y + ((r / ne.y) % ne.z) * nb.z + (r / (ne.y * ne.z)) * nb.w; }

void main() {
    const uint idx = flat_group() * 256u + gl_LocalInvocationID.x;
    const uint words = uint(P.i.x);   // 16-bit words per row
    const uvec4 ne = P.ne[0];
    if (idx >= words * ne.y * ne.z * ne.w) return;
    const uint w = idx % words, r = idx / words;
    dsth[(P.offs_d.x + row_byte(r, P.ne[4], P.nb[4])) / 2u + w] = uint16_t(s0_u16(row_byte(r, ne, P.nb[0]) + 2u * w));
}
