// Shared by every shader: the bindings and the parameter block the backend fills per node
// (vk_ops.cpp's NodeParams has the same layout).
//
// Bindings 0-3 are the node's operands src[0..3], 4 its result, each bound at an offset
// rounded down to the device's alignment: `offs` holds the remainder in bytes, so element i
// of an f32 operand is at word offs/4 + i. Strides are in bytes, as in pocket::Tensor.
// Halves and quantized bytes are read through 16-bit words (every ggml block is 2-aligned).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : enable

layout(std140, binding = 5) uniform NodeParams {
    uvec4 ne[5];     // elements per dim of src0..src3, dst
    uvec4 nb[5];     // byte strides of src0..src3, dst
    uvec4 offs;      // byte offset of src0..src3 within its binding
    uvec4 offs_d;    // x: byte offset of dst within its binding
    vec4 f;          // op floats
    vec4 f2;
    ivec4 i;         // op ints
} P;

layout(binding = 0) readonly buffer Src0F { float s0f[]; };
layout(binding = 0) readonly buffer Src0H { uint16_t s0h[]; };
layout(binding = 1) readonly buffer Src1F { float s1f[]; };
layout(binding = 1) readonly buffer Src1H { uint16_t s1h[]; };
layout(binding = 1) readonly buffer Src1I { int s1i[]; };
layout(binding = 2) readonly buffer Src2F { float s2f[]; };
layout(binding = 2) readonly buffer Src2H { uint16_t s2h[]; };
layout(binding = 2) readonly buffer Src2I { int s2i[]; };
layout(binding = 3) readonly buffer Src3F { float s3f[]; };

// A float at a byte offset (a multiple of 4) of an operand.
#define SRC0_F(byte) s0f[(P.offs.x + (byte)) >> 2]
#define SRC1_F(byte) s1f[(P.offs.y + (byte)) >> 2]
#define SRC2_F(byte) s2f[(P.offs.z + (byte)) >> 2]
#define SRC3_F(byte) s3f[(P.offs.w + (byte)) >> 2]
#define SRC1_I(byte) s1i[(P.offs.y + (byte)) >> 2]
#define SRC2_I(byte) s2i[(P.offs.z + (byte)) >> 2]

// A half at a byte offset (a multiple of 2), as float.
float half_at(uint16_t h) { return unpackHalf2x16(uint(h)).x; }
float bf16_at(uint16_t h) { return uintBitsToFloat(uint(h) << 16); }

// Byte and 16-bit access to src0 (weights, quantized caches) by byte offset from its start.
uint s0_u16(uint byte) { return uint(s0h[(P.offs.x + byte) >> 1]); }
uint s0_u8(uint byte) { uint b = P.offs.x + byte; return (uint(s0h[b >> 1]) >> ((b & 1u) * 8u)) & 0xFFu; }
int s0_i8(uint byte) { return int(s0_u8(byte) << 24) >> 24; }
uint s0_u32(uint byte) { return s0_u16(byte) | (s0_u16(byte + 2u) << 16); }  // byte 2-aligned
float s0_half(uint byte) { return half_at(s0h[(P.offs.x + byte) >> 1]); }

// Index of the thread's work item over a 2-D dispatch of 1-D workgroups.
uint flat_group() { return gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; }
