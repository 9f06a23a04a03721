// One Vulkan physical device opened for compute (see vk_gpu.hpp).
#include "backend/vulkan/vk_gpu.hpp"

#include "backend/vulkan/vk_shaders.hpp"
#include "pocket/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace pocket::vulkan {

namespace {

constexpr uint32_t kBindings = 6;   // src0..src3, dst (storage), parameters (uniform)
constexpr double kMiB = 1024.0 * 1024.0;

bool has_extension(VkPhysicalDevice phys, const char* name) {
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> exts(n);
    vkEnumerateDeviceExtensionProperties(phys, nullptr, &n, exts.data());
    return std::any_of(exts.begin(), exts.end(), [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

}  // namespace

const char* result_name(VkResult r) {
    switch (r) {
        case VK_SUCCESS: return "VK_SUCCESS";
        case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
        case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
        case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
        case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
        case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
        case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
        case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
        case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
        case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
        case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
        case VK_TIMEOUT: return "VK_TIMEOUT";
        default: return "VkResult error";
    }
}

void check(VkResult r, const char* what) {
    if (r != VK_SUCCESS) throw Error("Vulkan: {} failed: {} ({})", what, result_name(r), static_cast<int>(r));
}

Gpu::Gpu(VkPhysicalDevice phys, std::string name) : name_(std::move(name)), phys_(phys) {
    vkGetPhysicalDeviceProperties(phys, &props_);
    vkGetPhysicalDeviceMemoryProperties(phys, &mem_props_);

    // Features: 16-bit storage is required (halves and quantized blocks are read as 16-bit
    // words); fp16 arithmetic, integer dot products and subgroup sizes are recorded.
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f11.pNext = &f12;
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR fdot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
    const bool has_dot = has_extension(phys, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    if (has_dot) f12.pNext = &fdot;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    if (!f11.storageBuffer16BitAccess)
        throw Error("{} ({}) lacks 16-bit storage buffer access", name_, props_.deviceName);
    if (!f2.features.shaderInt16) throw Error("{} ({}) lacks 16-bit integers in shaders", name_, props_.deviceName);
    features_.fp16 = f12.shaderFloat16;
    features_.int8_dot = has_dot && fdot.shaderIntegerDotProduct;
    features_.memory_budget = has_extension(phys, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    sub.pNext = &m3;
    VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR pdot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES_KHR};
    if (has_dot) m3.pNext = &pdot;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sub;
    vkGetPhysicalDeviceProperties2(phys, &p2);
    features_.subgroup_size = sub.subgroupSize;
    max_allocation_ = m3.maxMemoryAllocationSize;
    features_.subgroup_shuffle = (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                                 (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    if (const char* v = std::getenv("POCKET_VULKAN_NO_SUBGROUPS"); v && *v && std::string_view(v) != "0")
        features_.subgroup_shuffle = false;
    features_.shared_tiles = props_.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    if (const char* v = std::getenv("POCKET_VULKAN_TILES"); v && *v) features_.shared_tiles = std::string_view(v) != "0";
    features_.int8_products = features_.int8_dot && pdot.integerDotProduct4x8BitPackedSignedAccelerated;
    if (const char* v = std::getenv("POCKET_VULKAN_INT8"); v && *v) features_.int8_products = features_.int8_dot && std::string_view(v) != "0";

    // A compute queue.
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> families(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, families.data());
    queue_family_ = UINT32_MAX;
    for (uint32_t i = 0; i < nq; ++i)
        if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            queue_family_ = i;
            break;
        }
    if (queue_family_ == UINT32_MAX) throw Error("{} ({}) has no compute queue", name_, props_.deviceName);

    // Memory types: device-local (preferring one the host can map too), and host-visible
    // coherent for staging.
    for (uint32_t i = 0; i < mem_props_.memoryTypeCount; ++i) {
        const VkMemoryPropertyFlags f = mem_props_.memoryTypes[i].propertyFlags;
        const bool local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
        const bool mappable = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        if (local && (local_type_ == UINT32_MAX || (mappable && !local_mappable_))) {
            local_type_ = i;
            local_mappable_ = mappable;
        }
        if (mappable && host_type_ == UINT32_MAX) host_type_ = i;
    }
    if (local_type_ == UINT32_MAX) local_type_ = host_type_;
    if (local_type_ == UINT32_MAX || host_type_ == UINT32_MAX) throw Error("{}: no usable memory type", name_);
    local_heap_ = mem_props_.memoryTypes[local_type_].heapIndex;

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qi.queueFamilyIndex = queue_family_;
    qi.queueCount = 1;
    qi.pQueuePriorities = &priority;
    VkPhysicalDeviceVulkan11Features on11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    on11.storageBuffer16BitAccess = VK_TRUE;
    VkPhysicalDeviceFeatures2 on{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    on.features.shaderInt16 = VK_TRUE;
    on.pNext = &on11;
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR on_dot{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
    on_dot.shaderIntegerDotProduct = VK_TRUE;
    std::vector<const char*> exts;
    if (features_.memory_budget) exts.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    if (features_.int8_dot) {
        exts.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
        on11.pNext = &on_dot;
    }
    VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    di.pNext = &on;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    di.enabledExtensionCount = static_cast<uint32_t>(exts.size());
    di.ppEnabledExtensionNames = exts.data();
    check(vkCreateDevice(phys, &di, nullptr, &device_), "vkCreateDevice");
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);

    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = queue_family_;
    check(vkCreateCommandPool(device_, &pi, nullptr, &pool_), "vkCreateCommandPool");
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(device_, &fi, nullptr, &fence_), "vkCreateFence");

    // One descriptor layout for every shader: 5 storage buffers and the parameter block.
    std::array<VkDescriptorSetLayoutBinding, kBindings> b{};
    for (uint32_t i = 0; i < kBindings; ++i) {
        b[i].binding = i;
        b[i].descriptorType = i + 1 < kBindings ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    li.bindingCount = kBindings;
    li.pBindings = b.data();
    check(vkCreateDescriptorSetLayout(device_, &li, nullptr, &set_layout_), "vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout_;
    check(vkCreatePipelineLayout(device_, &pli, nullptr, &pipeline_layout_), "vkCreatePipelineLayout");
}

Gpu::~Gpu() {
    if (!device_) return;
    vkDeviceWaitIdle(device_);
    release(staging_);
    for (auto& [name, p] : pipelines_) vkDestroyPipeline(device_, p, nullptr);
    for (auto& [name, m] : modules_) vkDestroyShaderModule(device_, m, nullptr);
    vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
    vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
    vkDestroyFence(device_, fence_, nullptr);
    vkDestroyCommandPool(device_, pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
}

std::string Gpu::description() const {
    const char* kind = props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU     ? "discrete GPU"
                       : props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU ? "integrated GPU"
                       : props_.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU            ? "CPU emulation"
                                                                                      : "device";
    return fmt::format("{} (Vulkan {}.{}, {}, subgroup {}{}{}{}{})", props_.deviceName, VK_API_VERSION_MAJOR(props_.apiVersion),
                       VK_API_VERSION_MINOR(props_.apiVersion), kind, features_.subgroup_size,
                       features_.subgroup_shuffle ? " with shuffles" : "", features_.fp16 ? ", fp16" : "",
                       features_.int8_products ? ", int8 dot products" : features_.int8_dot ? ", int8 dot (unused: not accelerated)" : "", features_.shared_tiles ? ", shared-memory tiles" : "");
}

uint64_t Gpu::memory_total() const { return mem_props_.memoryHeaps[local_heap_].size; }

uint64_t Gpu::memory_free() const {
    if (features_.memory_budget) {
        VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
        VkPhysicalDeviceMemoryProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
        p2.pNext = &budget;
        vkGetPhysicalDeviceMemoryProperties2(phys_, &p2);
        const uint64_t b = budget.heapBudget[local_heap_], u = budget.heapUsage[local_heap_];
        if (b > 0) return b > u ? b - u : 0;
    }
    std::lock_guard lock(mutex_);
    const uint64_t total = memory_total();
    return total > allocated_ ? total - allocated_ : 0;
}

Gpu::Allocation Gpu::allocate(uint64_t size, bool host_visible) {
    Allocation a;
    a.size = std::max<uint64_t>(size, 256);
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = a.size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(device_, &bi, nullptr, &a.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, a.buffer, &req);
    const uint32_t type = host_visible ? host_type_ : local_type_;
    auto fail = [&](VkResult r) {
        vkDestroyBuffer(device_, a.buffer, nullptr);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            throw Error("{}: out of device memory: {:.1f} MiB asked, {:.1f} MiB free", name_, static_cast<double>(size) / kMiB,
                        static_cast<double>(memory_free()) / kMiB);
        check(r, "vkAllocateMemory");
    };
    if (!(req.memoryTypeBits & (1u << type))) fail(VK_ERROR_FEATURE_NOT_PRESENT);
    // Stay within the budget even where the driver would over-commit (lavapipe allocates
    // host memory without limit; some GPU drivers page to system memory, slowly).
    if (!host_visible && req.size > memory_free()) fail(VK_ERROR_OUT_OF_DEVICE_MEMORY);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = type;
    if (VkResult r = vkAllocateMemory(device_, &ai, nullptr, &a.memory); r != VK_SUCCESS) fail(r);
    check(vkBindBufferMemory(device_, a.buffer, a.memory, 0), "vkBindBufferMemory");
    if (host_visible || local_mappable_) check(vkMapMemory(device_, a.memory, 0, VK_WHOLE_SIZE, 0, &a.mapped), "vkMapMemory");
    a.device_local = !host_visible;
    std::lock_guard lock(mutex_);
    if (a.device_local) allocated_ += req.size;
    return a;
}

void Gpu::release(Allocation& a) {
    if (!a.buffer) return;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device_, a.buffer, &req);
    vkDestroyBuffer(device_, a.buffer, nullptr);
    vkFreeMemory(device_, a.memory, nullptr);  // unmaps
    if (a.device_local) {
        std::lock_guard lock(mutex_);
        allocated_ -= std::min(allocated_, req.size);
    }
    a = {};
}

void Gpu::submit_locked(VkCommandBuffer cmd) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(vkResetFences(device_, 1, &fence_), "vkResetFences");
    check(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
    check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

void Gpu::run_locked(const std::function<void(VkCommandBuffer)>& record) {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    check(vkAllocateCommandBuffers(device_, &ai, &cmd), "vkAllocateCommandBuffers");
    struct Free {
        VkDevice d;
        VkCommandPool p;
        VkCommandBuffer c;
        ~Free() { vkFreeCommandBuffers(d, p, 1, &c); }
    } free_{device_, pool_, cmd};
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &bi), "vkBeginCommandBuffer");
    record(cmd);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    submit_locked(cmd);
}

Gpu::Allocation& Gpu::staging(uint64_t at_least) {
    if (staging_.size < at_least) {
        release(staging_);
        staging_ = allocate(std::max<uint64_t>(at_least, uint64_t{16} << 20), true);
    }
    return staging_;
}

VkPipeline Gpu::pipeline(std::string_view shader, uint32_t spec0, uint32_t spec1, uint32_t spec2) {
    const std::string key = fmt::format("{}/{}/{}/{}", shader, spec0, spec1, spec2);
    std::lock_guard lock(mutex_);
    if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
    auto mit = modules_.find(shader);
    if (mit == modules_.end()) {
        const ShaderBlob* blob = nullptr;
        for (const ShaderBlob& b : shader_blobs())
            if (b.name == shader) blob = &b;
        if (!blob) throw Error("Vulkan: no shader named {}", shader);
        VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
        mi.codeSize = blob->n_words * sizeof(uint32_t);
        mi.pCode = blob->words;
        VkShaderModule m;
        check(vkCreateShaderModule(device_, &mi, nullptr, &m), "vkCreateShaderModule");
        mit = modules_.emplace(std::string(shader), m).first;
    }
    const std::array<uint32_t, 3> spec{spec0, spec1, spec2};
    const std::array<VkSpecializationMapEntry, 3> entries{{{0, 0, 4}, {1, 4, 4}, {2, 8, 4}}};
    VkSpecializationInfo si{3, entries.data(), sizeof spec, spec.data()};
    VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = mit->second;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = &si;
    ci.layout = pipeline_layout_;
    VkPipeline p;
    check(vkCreateComputePipelines(device_, VK_NULL_HANDLE, 1, &ci, nullptr, &p), "vkCreateComputePipelines");
    pipelines_.emplace(key, p);
    return p;
}

}  // namespace pocket::vulkan
