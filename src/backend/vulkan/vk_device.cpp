// Vulkan devices: instance creation, enumeration, memory, and weight uploads.
#include "backend/vulkan/vk_backend.hpp"
#include "backend/vulkan/vk_buffer.hpp"
#include "pocket/error.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string_view>

namespace pocket::vulkan {

namespace {

std::atomic<uint64_t> next_tag{1};

// Largest single buffer pocket asks for: the driver's limit, at most 1 GiB (weights are
// spread over several buffers).
uint64_t max_buffer_bytes(const Gpu& gpu) { return std::min<uint64_t>(gpu.max_allocation(), uint64_t{1} << 30); }

}  // namespace

VulkanDevice::VulkanDevice(std::shared_ptr<void> instance, std::unique_ptr<Gpu> gpu) : instance_(std::move(instance)), gpu_(std::move(gpu)) {}

std::unique_ptr<Buffer> VulkanDevice::alloc_buffer(size_t bytes) {
    const size_t size = Buffer::aligned_size(std::max<size_t>(bytes, 1));
    return std::make_unique<VulkanBuffer>(*this, *gpu_, gpu_->allocate(size, false), size, next_tag++);
}

std::unique_ptr<Backend> VulkanDevice::make_backend(int) { return vulkan::make_backend(*this); }

bool VulkanDevice::holds_weight_type(GgmlType t) const { return decodes_weight_type(t); }

std::vector<std::unique_ptr<Buffer>> VulkanDevice::load_weights(std::span<Tensor* const> weights, const WeightLoadOptions& options) {
    // Weights too large for one binding stay in host memory (their products run on the CPU).
    std::vector<Tensor*> mine;
    size_t total = 0;
    for (Tensor* w : weights)
        if (w->nbytes() + gpu_->binding_align() <= gpu_->max_binding()) {
            mine.push_back(w);
            total += Buffer::aligned_size(w->nbytes());
        }
    std::vector<std::unique_ptr<Buffer>> out;
    size_t done = 0;
    for (size_t i = 0; i < mine.size();) {
        // One buffer for as many consecutive weights as fit under the size limit.
        size_t bytes = 0, j = i;
        while (j < mine.size() && (j == i || bytes + Buffer::aligned_size(mine[j]->nbytes()) <= max_buffer_bytes(*gpu_)))
            bytes += Buffer::aligned_size(mine[j++]->nbytes());
        auto buffer = alloc_buffer(bytes);
        upload_weights(*buffer, std::span<Tensor* const>(mine).subspan(i, j - i), options, done, total);
        i = j;
        out.push_back(std::move(buffer));
    }
    return out;
}

std::vector<std::unique_ptr<Device>> find_devices(std::string& problem) {
    std::vector<std::unique_ptr<Device>> out;
    if (const char* v = std::getenv("POCKET_VULKAN"); v && std::string_view(v) == "0") {
        problem = "Vulkan: turned off by POCKET_VULKAN=0";
        return out;
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "pocket";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ci.pApplicationInfo = &app;
    VkInstance instance = VK_NULL_HANDLE;
    if (VkResult r = vkCreateInstance(&ci, nullptr, &instance); r != VK_SUCCESS) {
        problem = fmt::format("Vulkan: no driver ({})", result_name(r));
        return out;
    }
    std::shared_ptr<void> keep(instance, [](void* i) { vkDestroyInstance(static_cast<VkInstance>(i), nullptr); });
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(instance, &n, nullptr);
    std::vector<VkPhysicalDevice> phys(n);
    vkEnumeratePhysicalDevices(instance, &n, phys.data());
    if (n == 0) problem = "Vulkan: no device";
    for (VkPhysicalDevice p : phys) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(p, &props);
        const std::string name = fmt::format("Vulkan{}", out.size());
        if (props.apiVersion < VK_API_VERSION_1_2) {
            spdlog::info("Vulkan: {} supports Vulkan {}.{} only (1.2 needed); not used", props.deviceName,
                         VK_API_VERSION_MAJOR(props.apiVersion), VK_API_VERSION_MINOR(props.apiVersion));
            continue;
        }
        try {
            out.push_back(std::make_unique<VulkanDevice>(keep, std::make_unique<Gpu>(p, name)));
        } catch (const Error& e) {
            problem = fmt::format("Vulkan: {} not used: {}", props.deviceName, e.what());
            spdlog::warn("{}", problem);
        }
    }
    return out;
}

}  // namespace pocket::vulkan
