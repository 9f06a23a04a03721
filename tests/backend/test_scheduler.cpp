// The scheduler against the copy-through device, which behaves like a GPU: its memory is its
// own (no other code can dereference it), so everything it reads from elsewhere (graph
// inputs, the residual stream, weights) must arrive by explicit copies, and writes into
// memory it cannot reach are refused.
#include "mini_llama.hpp"

#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <cstdlib>

namespace pocket::test {
namespace {

std::vector<int32_t> iota_rows(size_t n) {
    std::vector<int32_t> rows(n);
    for (size_t i = 0; i < n; ++i) rows[i] = static_cast<int32_t>(i);
    return rows;
}

const std::vector<int32_t> kPrompt = {2, 9, 31, 4, 27};

TEST(Scheduler, DeviceLikeBackendGetsEverythingByCopyAndMatchesCpu) {
    auto cpu = make_cpu_backend({.n_threads = 2});
    std::vector<uint8_t> ref;
    {
        Scheduler one(*cpu);
        MiniLlama model(*cpu, GgmlType::F32, GgmlType::F16);
        Graph g;
        auto in = model.build(g, 5, 5);
        one.allocate(g);
        MiniLlama::set_inputs(in, kPrompt, 0, iota_rows(5));
        one.compute(g);
        ref = bytes_of(*in.logits);
    }
    auto test_device = make_copy_through_device();
    auto device = test_device->make_backend(2);
    // Layers 1.. and the output on the device; the CPU is the fallback backend (last).
    Scheduler split({device.get(), cpu.get()}, [](int layer) { return layer >= 1 ? 0 : 1; });
    MiniLlama model(*cpu, GgmlType::F32, GgmlType::F16, device.get(), 1);
    Graph g;
    auto in = model.build(g, 5, 5);
    split.allocate(g);
    MiniLlama::set_inputs(in, kPrompt, 0, iota_rows(5));
    split.compute(g);
    EXPECT_EQ(bytes_of(*in.logits), ref);
    EXPECT_GT(split.n_copies_run(), 0u);
    EXPECT_EQ(&in.logits->buffer->device(), test_device.get());
}

TEST(Scheduler, RefusesToWriteIntoUnreachableMemory) {
    auto cpu = make_cpu_backend({.n_threads = 1});
    auto test_device = make_copy_through_device();
    auto device = test_device->make_backend(1);
    Scheduler split({device.get(), cpu.get()}, [](int layer) { return layer >= 1 ? 0 : 1; });
    MiniLlama model(*cpu, GgmlType::F32, GgmlType::F16);  // every KV cache on the CPU
    Graph g;
    model.build(g, 2, 2);
    EXPECT_THROW(split.allocate(g), Error);
}

}  // namespace
}  // namespace pocket::test
