// Element-wise ops: one thread per element of the contiguous f32 result, 256 per workgroup
// over a 2-D grid of workgroups. Operands are f32 with any byte strides.
layout(local_size_x = 256) in;
layout(binding = 4) writeonly buffer Dst { float dst[]; };

// The element's coordinates in dst; false past the end.
bool element_coords(out uvec4 i) {
    const uint idx = flat_group() * 256u + gl_LocalInvocationID.x;
    const uvec4 ne = P.ne[4];
    if (idx >= ne.x * ne.y * ne.z * ne.w) return false;
    i.x = idx % ne.x;
    i.y = (idx / ne.x) % ne.y;
    i.z = (idx / (ne.x * ne.y)) % ne.z;
    i.w = idx / (ne.x * ne.y * ne.z);
    return true;
}
uint byte_of(uvec4 i, uvec4 nb) { return i.x * nb.x + i.y * nb.y + i.z * nb.z + i.w * nb.w; }
void store(uvec4 i, float v) { dst[(P.offs_d.x + byte_of(i, P.nb[4])) >> 2] = v; }

float silu(float x) { return x / (1.0 + exp(-x)); }
// ggml's tanh approximation.
float gelu(float x) { return 0.5 * x * (1.0 + tanh(0.79788456080286535587989211986876 * x * (1.0 + 0.044715 * x * x))); }
