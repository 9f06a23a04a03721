// The Vulkan devices' own promises, on whatever Vulkan device this machine has (lavapipe in
// CI); skipped without one. The ops themselves are checked by the op harness.
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <numeric>

using namespace pocket;

namespace {

std::vector<Device*> vulkan_devices() {
    std::vector<Device*> out;
    for (Device* d : gpu_devices())
        if (d->name().starts_with("Vulkan")) out.push_back(d);
    return out;
}

}  // namespace

TEST(VulkanDevice, OutOfMemoryIsOneLineNamingTheDeviceAndTheSizes) {
    const auto devs = vulkan_devices();
    if (devs.empty()) GTEST_SKIP() << "no Vulkan device on this machine";
    for (Device* d : devs) {
        const size_t ask = d->memory().total + (size_t{64} << 20);
        try {
            auto b = d->alloc_buffer(ask);
            ADD_FAILURE() << d->name() << " allocated " << ask << " bytes, more than it has";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_TRUE(m.starts_with(std::string(d->name()) + ": out of device memory: ")) << m;
            EXPECT_NE(m.find(" MiB asked, "), std::string::npos) << m;
            EXPECT_NE(m.find(" MiB free"), std::string::npos) << m;
            EXPECT_EQ(m.find('\n'), std::string::npos) << m;
        }
    }
}

// Bytes written through a buffer come back unchanged, at any offset and length (mapped, or
// through the staging buffer when POCKET_VULKAN_STAGING=1: ctest runs this test both ways).
TEST(VulkanDevice, BufferBytesRoundTrip) {
    const auto devs = vulkan_devices();
    if (devs.empty()) GTEST_SKIP() << "no Vulkan device on this machine";
    for (Device* d : devs) {
        auto buf = d->alloc_buffer(1 << 20);
        std::vector<uint8_t> bytes(1000);
        std::iota(bytes.begin(), bytes.end(), uint8_t{3});
        auto* at = static_cast<uint8_t*>(buf->data()) + 12345;
        buf->fill(buf->data(), 0xAB, buf->size());
        buf->write(at, bytes.data(), bytes.size());
        std::vector<uint8_t> back(bytes.size() + 2);
        buf->read(at - 1, back.data(), back.size());
        EXPECT_EQ(back.front(), 0xAB);
        EXPECT_EQ(back.back(), 0xAB);
        EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), back.begin() + 1));
        EXPECT_THROW(buf->read(static_cast<uint8_t*>(buf->data()) + buf->size() - 4, back.data(), 8), Error)
            << "a read past the buffer's end is refused";
    }
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
