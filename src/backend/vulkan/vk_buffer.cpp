// Vulkan buffers (see vk_buffer.hpp).
#include "backend/vulkan/vk_buffer.hpp"

#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace pocket::vulkan {

namespace {

bool force_staging() {
    static const bool on = [] {
        const char* v = std::getenv("POCKET_VULKAN_STAGING");
        return v && *v && std::string_view(v) != "0";
    }();
    return on;
}

// The base address of buffer number `tag`: bit 62 (no host pointer has it) and the tag.
void* tagged_address(uint64_t tag) { return reinterpret_cast<void*>((uint64_t{1} << 62) | ((tag & 0xFFFFF) << 40)); }

}  // namespace

VulkanBuffer::VulkanBuffer(Device& device, Gpu& gpu, Gpu::Allocation alloc, size_t size, uint64_t tag)
    : Buffer(device, tagged_address(tag), size), gpu_(gpu), alloc_(alloc) {
    if (force_staging()) alloc_.mapped = nullptr;
}

VulkanBuffer::~VulkanBuffer() { gpu_.release(alloc_); }

uint64_t VulkanBuffer::offset_of(const void* at, size_t size) const {
    const auto a = reinterpret_cast<uintptr_t>(at), base = reinterpret_cast<uintptr_t>(data());
    if (a < base || a + size > base + this->size())
        throw Error("{}: access of {} bytes outside its buffer", device().name(), size);
    return a - base;
}

// Copies [off, off + size) between this buffer and host memory through the staging buffer,
// in chunks: to_device copies host -> staging -> buffer, else buffer -> staging -> host.
void VulkanBuffer::staged_copy(uint64_t off, uint8_t* host, size_t size, bool to_device) const {
    std::lock_guard lock(gpu_.queue_mutex());
    constexpr uint64_t kChunk = uint64_t{64} << 20;
    Gpu::Allocation& st = gpu_.staging(std::min<uint64_t>(size, kChunk));
    for (uint64_t done = 0; done < size;) {
        const uint64_t n = std::min<uint64_t>(size - done, st.size);
        if (to_device) std::memcpy(st.mapped, host + done, n);
        gpu_.run_locked([&](VkCommandBuffer cmd) {
            const VkBufferCopy region{to_device ? 0 : off + done, to_device ? off + done : 0, n};
            vkCmdCopyBuffer(cmd, to_device ? st.buffer : alloc_.buffer, to_device ? alloc_.buffer : st.buffer, 1, &region);
        });
        if (!to_device) std::memcpy(host + done, st.mapped, n);
        done += n;
    }
}

void VulkanBuffer::write(void* at, const void* src, size_t size) {
    const uint64_t off = offset_of(at, size);
    if (size == 0) return;
    if (alloc_.mapped) std::memcpy(static_cast<uint8_t*>(alloc_.mapped) + off, src, size);
    else staged_copy(off, const_cast<uint8_t*>(static_cast<const uint8_t*>(src)), size, true);
}

void VulkanBuffer::read(const void* at, void* dst, size_t size) const {
    const uint64_t off = offset_of(at, size);
    if (size == 0) return;
    if (alloc_.mapped) std::memcpy(dst, static_cast<const uint8_t*>(alloc_.mapped) + off, size);
    else staged_copy(off, static_cast<uint8_t*>(dst), size, false);
}

void VulkanBuffer::fill(void* at, uint8_t value, size_t size) {
    const uint64_t off = offset_of(at, size);
    if (alloc_.mapped) {
        std::memset(static_cast<uint8_t*>(alloc_.mapped) + off, value, size);
        return;
    }
    // vkCmdFillBuffer wants 4-byte multiples: go through the staging path with a pattern.
    std::vector<uint8_t> bytes(std::min<size_t>(size, size_t{16} << 20), value);
    for (size_t done = 0; done < size;) {
        const size_t n = std::min(bytes.size(), size - done);
        write(static_cast<uint8_t*>(at) + done, bytes.data(), n);
        done += n;
    }
}

}  // namespace pocket::vulkan
