#pragma once
// Internal: the Vulkan device (one per usable physical device) and its backend.
#include "backend/vulkan/vk_gpu.hpp"
#include "pocket/device.hpp"

#include <memory>
#include <string>
#include <vector>

namespace pocket::vulkan {

class VulkanDevice;

// The backend: runs a graph's nodes as compute dispatches recorded into one command buffer
// per run of nodes, recorded once and replayed until the graph is re-planned.
std::unique_ptr<Backend> make_backend(VulkanDevice& device);

// Can the Vulkan backend run `node`? (Types, shapes, binding sizes; see vk_ops.cpp.)
bool supports(const Gpu& gpu, const Tensor& node);
// Has the Vulkan backend shaders that decode weights of type `t`?
bool decodes_weight_type(GgmlType t);

class VulkanDevice final : public Device {
public:
    VulkanDevice(std::shared_ptr<void> instance, std::unique_ptr<Gpu> gpu);

    std::string_view name() const override { return gpu_->name(); }
    std::string description() const override { return gpu_->description(); }
    DeviceMemory memory() const override { return {gpu_->memory_free(), gpu_->memory_total()}; }
    bool is_host() const override { return false; }
    bool emulated() const override { return gpu_->emulated(); }
    bool holds_weight_type(GgmlType t) const override;
    std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override;
    std::unique_ptr<Backend> make_backend(int n_threads) override;
    std::vector<std::unique_ptr<Buffer>> load_weights(std::span<Tensor* const> weights, const WeightLoadOptions& options) override;

    Gpu& gpu() { return *gpu_; }

private:
    std::shared_ptr<void> instance_;  // declared first: destroyed after the device
    std::unique_ptr<Gpu> gpu_;
};

// Finds the Vulkan devices of this machine (none when POCKET_VULKAN=0). Sets `problem` to a
// one-line reason when Vulkan is present but unusable (no driver, a driver error).
std::vector<std::unique_ptr<Device>> find_devices(std::string& problem);

}  // namespace pocket::vulkan
