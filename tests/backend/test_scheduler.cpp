// The scheduler against a backend that behaves like a GPU: its memory is its own (not host),
// so everything it reads from elsewhere (graph inputs, the residual stream, weights) must
// arrive by explicit copies, and writes into memory it cannot reach are refused.
#include "mini_llama.hpp"

#include "pocket/error.hpp"

#include <cstdlib>

namespace pocket::test {
namespace {

// Runs ops with a private CPU backend, but owns its buffers and reads nothing else.
class DeviceLikeBackend final : public Backend {
public:
    DeviceLikeBackend() : inner_(make_cpu_backend({.n_threads = 2})) {}

    std::string_view name() const override { return "device"; }
    bool is_host() const override { return false; }
    bool can_access(const Tensor& t) const override {
        const Tensor* b = t.base();
        return b->buffer && &b->buffer->backend() == this;
    }
    std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override {
        return std::make_unique<DeviceBuffer>(*this, bytes);
    }
    bool supports_op(const Tensor& node) const override { return inner_->supports_op(node); }
    void reserve(std::span<Tensor* const> nodes) override {
        for (const Tensor* n : nodes)
            for (const Tensor* s : n->src)
                if (s && !op_is_view(n->op)) {
                    EXPECT_TRUE(can_access(*s)) << "operand " << tensor_desc(*s) << " of " << op_name(n->op);
                }
        inner_->reserve(nodes);
    }
    void compute(std::span<Tensor* const> nodes) override { inner_->compute(nodes); }
    void set_tensor(Tensor& t, const void* src, size_t offset, size_t size) override {
        std::memcpy(static_cast<uint8_t*>(t.data) + offset, src, size);
    }
    void get_tensor(const Tensor& t, void* dst, size_t offset, size_t size) override {
        std::memcpy(dst, static_cast<const uint8_t*>(t.data) + offset, size);
    }
    void memset(void* ptr, uint8_t value, size_t size) override { std::memset(ptr, value, size); }
    void copy_from(Backend& from, const Tensor& src, Tensor& dst) override {
        ++copies;
        from.get_tensor(src, dst.data, 0, src.nbytes());
    }

    int copies = 0;

private:
    struct DeviceBuffer final : Buffer {
        DeviceBuffer(Backend& b, size_t size) : Buffer(b, std::aligned_alloc(kAlign, (size + kAlign) / kAlign * kAlign), size) {}
        ~DeviceBuffer() override { std::free(data()); }
    };
    std::unique_ptr<Backend> inner_;
};

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
    DeviceLikeBackend device;
    // Layers 1.. and the output on the device; the CPU is the fallback backend (last).
    Scheduler split({&device, cpu.get()}, [](int layer) { return layer >= 1 ? 0 : 1; });
    MiniLlama model(*cpu, GgmlType::F32, GgmlType::F16, &device, 1);
    Graph g;
    auto in = model.build(g, 5, 5);
    split.allocate(g);
    MiniLlama::set_inputs(in, kPrompt, 0, iota_rows(5));
    split.compute(g);
    EXPECT_EQ(bytes_of(*in.logits), ref);
    EXPECT_GT(device.copies, 0);
    EXPECT_EQ(&in.logits->buffer->backend(), &device);
}

TEST(Scheduler, RefusesToWriteIntoUnreachableMemory) {
    auto cpu = make_cpu_backend({.n_threads = 1});
    DeviceLikeBackend device;
    Scheduler split({&device, cpu.get()}, [](int layer) { return layer >= 1 ? 0 : 1; });
    MiniLlama model(*cpu, GgmlType::F32, GgmlType::F16);  // every KV cache on the CPU
    Graph g;
    model.build(g, 2, 2);
    EXPECT_THROW(split.allocate(g), Error);
}

}  // namespace
}  // namespace pocket::test
