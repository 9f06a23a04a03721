#pragma once
// Internal: the SPIR-V modules compiled from shaders/ at build time and embedded in the
// library (generated vk_shaders_data.cpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace pocket::vulkan {

struct ShaderBlob {
    std::string_view name;   // e.g. "mul_mat_q4_0"
    const uint32_t* words;
    size_t n_words;
};

const std::span<const ShaderBlob> shader_blobs();

}  // namespace pocket::vulkan
