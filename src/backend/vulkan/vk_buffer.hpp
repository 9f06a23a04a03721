#pragma once
// Internal: a block of a Vulkan device's memory as a pocket::Buffer. Its data() is an
// address no host code can dereference (bit 62 set, and a per-buffer tag), so a tensor's
// data pointer names its buffer and offset; the backend binds (VkBuffer, offset) from it.
// Byte access goes through a mapping when the memory is host-visible (lavapipe, UMA GPUs)
// and through the device's staging buffer otherwise (POCKET_VULKAN_STAGING=1 forces that).
#include "backend/vulkan/vk_gpu.hpp"
#include "pocket/backend.hpp"

namespace pocket::vulkan {

class VulkanBuffer final : public Buffer {
public:
    VulkanBuffer(Device& device, Gpu& gpu, Gpu::Allocation alloc, size_t size, uint64_t tag);
    ~VulkanBuffer() override;

    void write(void* at, const void* src, size_t size) override;
    void read(const void* at, void* dst, size_t size) const override;
    void fill(void* at, uint8_t value, size_t size) override;

    VkBuffer vk() const { return alloc_.buffer; }
    // Byte offset of a device address inside this buffer (throws when outside).
    uint64_t offset_of(const void* at, size_t size = 0) const;

private:
    void staged_copy(uint64_t off, uint8_t* host, size_t size, bool to_device) const;
    Gpu& gpu_;
    Gpu::Allocation alloc_;
};

}  // namespace pocket::vulkan
