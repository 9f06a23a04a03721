// The CUDA devices' own promises, on whatever NVIDIA GPU this machine has; skipped without
// one ("no CUDA device"). The ops themselves are checked by the op harness, the models by the
// reference-logits, determinism and perplexity tests, which take the first GPU device.
#include "pocket/device.hpp"
#include "pocket/error.hpp"
#include "pocket/model.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <numeric>

using namespace pocket;

namespace {

std::vector<Device*> cuda_devices() {
    std::vector<Device*> out;
    for (Device* d : gpu_devices())
        if (d->name().starts_with("CUDA")) out.push_back(d);
    return out;
}

}  // namespace

TEST(CudaDevice, OutOfMemoryIsOneLineNamingTheDeviceAndTheSizes) {
    const auto devs = cuda_devices();
    if (devs.empty()) GTEST_SKIP() << "no CUDA device on this machine";
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
        // The failed allocation leaves the device usable.
        EXPECT_NO_THROW(d->alloc_buffer(1 << 20));
    }
}

// Bytes written through a buffer come back unchanged, at any offset and length; fill sets them.
TEST(CudaDevice, BufferBytesRoundTrip) {
    const auto devs = cuda_devices();
    if (devs.empty()) GTEST_SKIP() << "no CUDA device on this machine";
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

// A real GPU: -ngl auto puts a model that fits wholly on it.
TEST(CudaDevice, AutoPutsASmallModelOnTheGpu) {
    const auto devs = cuda_devices();
    if (devs.empty()) GTEST_SKIP() << "no CUDA device on this machine";
    const std::string model = (test::source_dir() / "models" / "stories260K.gguf").string();
    auto automatic = Model::load(model, {.gpu_layers = GpuLayers::parse("auto"), .device = std::string(devs.front()->name())});
    EXPECT_EQ(automatic->placement().n_gpu_layers, automatic->hparams().n_layer + 1) << automatic->placement().summary;
}
