// The Vulkan devices' own promises, on whatever Vulkan device this machine has (lavapipe in
// CI); skipped without one. The ops themselves are checked by the op harness.
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"
#include "gpu_device_checks.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

using namespace pocket;

namespace {

std::vector<Device*> vulkan_devices() { return test::gpu_devices_named("Vulkan"); }

}  // namespace

TEST(VulkanDevice, OutOfMemoryIsOneLineNamingTheDeviceAndTheSizes) {
    const auto devs = vulkan_devices();
    if (devs.empty()) GTEST_SKIP() << "no Vulkan device on this machine";
    for (Device* d : devs) test::expect_out_of_memory_is_one_line(*d);
}

// Mapped, or through the staging buffer when POCKET_VULKAN_STAGING=1: ctest runs this test
// both ways.
TEST(VulkanDevice, BufferBytesRoundTrip) {
    const auto devs = vulkan_devices();
    if (devs.empty()) GTEST_SKIP() << "no Vulkan device on this machine";
    for (Device* d : devs) test::expect_buffer_bytes_round_trip(*d);
}

// lavapipe is a GPU API on the CPU: -ngl auto leaves everything on the CPU backend, which is
// faster on the same cores; asked for by name, it takes the layers.
TEST(VulkanDevice, AutoNeverPicksAnEmulatedDevice) {
    const auto devs = vulkan_devices();
    if (devs.empty() || !devs.front()->emulated()) GTEST_SKIP() << "no emulated Vulkan device on this machine";
    const std::string model = (test::source_dir() / "models" / "stories260K.gguf").string();
    auto automatic = Model::load(model, {.gpu_layers = GpuLayers::parse("auto"), .device = std::string(devs.front()->name())});
    EXPECT_EQ(automatic->placement().n_gpu_layers, 0u) << automatic->placement().summary;
    auto all = Model::load(model, {.gpu_layers = GpuLayers::all(), .device = std::string(devs.front()->name())});
    EXPECT_EQ(all->placement().n_gpu_layers, all->hparams().n_layer + 1) << all->placement().summary;
}
