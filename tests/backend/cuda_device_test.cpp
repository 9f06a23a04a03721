// The CUDA devices' own promises, on whatever NVIDIA GPU this machine has; skipped without
// one ("no CUDA device"). The ops themselves are checked by the op harness, the models by the
// reference-logits, determinism and perplexity tests, which take the first GPU device.
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"
#include "gpu_device_checks.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

using namespace pocket;

namespace {

std::vector<Device*> cuda_devices() { return test::gpu_devices_named("CUDA"); }

}  // namespace

TEST(CudaDevice, OutOfMemoryIsOneLineNamingTheDeviceAndTheSizes) {
    const auto devs = cuda_devices();
    if (devs.empty()) GTEST_SKIP() << "no CUDA device on this machine";
    for (Device* d : devs) {
        test::expect_out_of_memory_is_one_line(*d);
        EXPECT_NO_THROW(d->alloc_buffer(1 << 20)) << "the failed allocation leaves the device usable";
    }
}

TEST(CudaDevice, BufferBytesRoundTrip) {
    const auto devs = cuda_devices();
    if (devs.empty()) GTEST_SKIP() << "no CUDA device on this machine";
    for (Device* d : devs) test::expect_buffer_bytes_round_trip(*d);
}

// A real GPU: -ngl auto puts a model that fits wholly on it.
TEST(CudaDevice, AutoPutsASmallModelOnTheGpu) {
    const auto devs = cuda_devices();
    if (devs.empty()) GTEST_SKIP() << "no CUDA device on this machine";
    const std::string model = (test::source_dir() / "models" / "stories260K.gguf").string();
    auto automatic = Model::load(model, {.gpu_layers = GpuLayers::parse("auto"), .device = std::string(devs.front()->name())});
    EXPECT_EQ(automatic->placement().n_gpu_layers, automatic->hparams().n_layer + 1) << automatic->placement().summary;
}
