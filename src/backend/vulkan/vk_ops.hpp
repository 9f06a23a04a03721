#pragma once
// Internal: how each op runs on the Vulkan backend: which shader, its parameter block
// (shaders/common.glsl's NodeParams) and its workgroup grid.
#include "backend/vulkan/vk_gpu.hpp"
#include "pocket/tensor.hpp"

#include <array>
#include <string>

namespace pocket::vulkan {

// std140 layout of shaders/common.glsl's NodeParams.
struct NodeParams {
    uint32_t ne[5][4];
    uint32_t nb[5][4];
    uint32_t offs[4];
    uint32_t offs_d[4];
    float f[4];
    float f2[4];
    int32_t i[4];
};
static_assert(sizeof(NodeParams) == 240);
inline constexpr size_t kParamsStride = 256;   // per node in the parameter buffer

struct Dispatch {
    std::string shader;
    uint32_t spec0 = 1, spec1 = 1, spec2 = 0;
    std::array<uint32_t, 3> groups{1, 1, 1};
};

// The shader, parameters (except offsets, which the backend sets) and grid for `node`.
Dispatch encode(const Gpu& gpu, const Tensor& node, NodeParams& p);

}  // namespace pocket::vulkan
