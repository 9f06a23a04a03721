#pragma once
// Internal: one Vulkan physical device opened for compute: its logical device, one queue,
// the memory types pocket uses, the features that pick shader paths, a pipeline cache, and
// blocking one-shot submissions (uploads, downloads, graph runs). Shared by the device's
// buffers and backends; the queue is used under a mutex, so several contexts may share it.
#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace pocket::vulkan {

// Throws pocket::Error "<what>: <VkResult name>" unless r is VK_SUCCESS.
void check(VkResult r, const char* what);
const char* result_name(VkResult r);

struct Features {
    bool fp16 = false;          // shaderFloat16
    bool int8_dot = false;      // VK_KHR_shader_integer_dot_product (enabled when present)
    // Q4_0 / Q8_0 products through 8-bit dot products of activations quantized on the fly
    // (mul_mat_q8.comp): where the driver says 4x8-bit packed signed dots are accelerated;
    // POCKET_VULKAN_INT8=0/1 overrides (1 needs int8_dot).
    bool int8_products = false;
    uint32_t subgroup_size = 0;
    bool subgroup_shuffle = false;   // in compute shaders
    bool memory_budget = false; // VK_EXT_memory_budget
    // Prompt products through shared-memory tiles (mul_mm.comp): on a GPU, not on an emulated
    // device, whose shared memory is ordinary memory and whose barriers are context switches
    // (on lavapipe the tiles run at half the speed). POCKET_VULKAN_TILES=0/1 overrides.
    bool shared_tiles = false;
};

class Gpu {
public:
    // Opens physical device `phys`; throws pocket::Error on a driver error.
    Gpu(VkPhysicalDevice phys, std::string name);
    ~Gpu();
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;

    const std::string& name() const { return name_; }
    std::string description() const;
    VkDevice device() const { return device_; }
    const VkPhysicalDeviceProperties& properties() const { return props_; }
    const Features& features() const { return features_; }
    bool emulated() const { return props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU; }
    // The largest range one descriptor may bind (a tensor bigger than this runs elsewhere).
    uint64_t max_binding() const { return props_.limits.maxStorageBufferRange; }
    uint64_t binding_align() const { return props_.limits.minStorageBufferOffsetAlignment; }
    // The largest single allocation the driver allows.
    uint64_t max_allocation() const { return max_allocation_; }

    // Device-local memory: total, and free (the driver's budget when it reports one, else the
    // heap size less what pocket allocated).
    uint64_t memory_total() const;
    uint64_t memory_free() const;

    // A buffer with its own memory. host_visible: mappable (staging, parameters); else
    // device-local (mappable too when the device's local memory is, as on lavapipe or UMA
    // GPUs: then *mapped is set). Throws pocket::Error naming the device, the MiB asked and
    // free when memory runs out.
    struct Allocation {
        VkBuffer buffer = VK_NULL_HANDLE;
        VkDeviceMemory memory = VK_NULL_HANDLE;
        void* mapped = nullptr;
        uint64_t size = 0;
        bool device_local = false;
    };
    Allocation allocate(uint64_t size, bool host_visible);
    void release(Allocation& a);

    // Records commands with `record` into a fresh command buffer, submits it and waits;
    // the caller holds queue_mutex().
    void run_locked(const std::function<void(VkCommandBuffer)>& record);
    // Submits a recorded command buffer and waits for it; the caller holds queue_mutex().
    void submit_locked(VkCommandBuffer cmd);
    VkCommandPool command_pool() const { return pool_; }
    std::mutex& queue_mutex() { return queue_mutex_; }

    VkDescriptorSetLayout set_layout() const { return set_layout_; }
    VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
    // The compute pipeline of embedded shader `shader` with specialization constants
    // (constant_id 0, 1, 2), created on first use.
    VkPipeline pipeline(std::string_view shader, uint32_t spec0 = 1, uint32_t spec1 = 1, uint32_t spec2 = 0);

    // Host-visible staging memory for uploads and downloads (grown on demand), used under
    // the queue mutex.
    Allocation& staging(uint64_t at_least);

private:
    std::string name_;
    VkPhysicalDevice phys_;
    VkPhysicalDeviceProperties props_{};
    VkPhysicalDeviceMemoryProperties mem_props_{};
    Features features_;
    uint64_t max_allocation_ = uint64_t{1} << 30;
    VkDevice device_ = VK_NULL_HANDLE;
    VkQueue queue_ = VK_NULL_HANDLE;
    uint32_t queue_family_ = 0;
    VkCommandPool pool_ = VK_NULL_HANDLE;
    VkFence fence_ = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
    VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
    uint32_t local_type_ = UINT32_MAX, host_type_ = UINT32_MAX;
    bool local_mappable_ = false;
    uint32_t local_heap_ = 0;
    mutable std::mutex mutex_;      // allocations, pipelines
    std::mutex queue_mutex_;
    uint64_t allocated_ = 0;
    std::map<std::string, VkPipeline, std::less<>> pipelines_;
    std::map<std::string, VkShaderModule, std::less<>> modules_;
    Allocation staging_;
};

}  // namespace pocket::vulkan
