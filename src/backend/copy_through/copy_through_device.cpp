// The copy-through test device: a "GPU" whose kernels are the CPU's, but whose memory no
// other code can reach. Its buffers hand out addresses with bit 62 set (non-canonical on
// x86-64 and aarch64: dereferencing one outside this file faults at once), and only its
// buffer's read / write / fill and its backend's compute translate them to the real host
// memory behind. So a model runs on it only if placement, uploads, the KV cache and the
// scheduler's copies are all right, which is what the tests want to prove before a real GPU
// backend exists.
#include "backend/cpu/cpu_device.hpp"
#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace pocket {

namespace {

constexpr uintptr_t kBias = uintptr_t{1} << 62;

bool is_device_address(const void* p) { return (reinterpret_cast<uintptr_t>(p) & kBias) != 0; }
void* to_host(void* p) { return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) - kBias); }

class PrivateBuffer final : public Buffer {
public:
    PrivateBuffer(Device& device, void* host, size_t size)
        : Buffer(device, reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(host) + kBias), size), host_(host) {}
    ~PrivateBuffer() override { std::free(host_); }

    void write(void* at, const void* src, size_t size) override { std::memcpy(checked(at, size), src, size); }
    void read(const void* at, void* dst, size_t size) const override { std::memcpy(dst, checked(at, size), size); }
    void fill(void* at, uint8_t value, size_t size) override { std::memset(checked(at, size), value, size); }

private:
    void* checked(const void* at, size_t size) const {
        const auto a = reinterpret_cast<uintptr_t>(at), base = reinterpret_cast<uintptr_t>(data());
        if (a < base || a + size > base + this->size())
            throw Error("{}: access of {} bytes outside its buffer", device().name(), size);
        return reinterpret_cast<void*>(a - kBias);
    }
    void* host_;
};

class CopyThroughBackend final : public Backend {
public:
    CopyThroughBackend(Device& device, int n_threads) : device_(device), cpu_(make_cpu_backend({.n_threads = n_threads})) {}

    Device& device() const override { return device_; }
    bool can_access(const Tensor& t) const override {
        const Buffer* b = t.base()->buffer;
        return b && &b->device() == &device_;
    }
    bool supports_op(const Tensor& node) const override { return cpu_->supports_op(node); }
    void reserve(std::span<Tensor* const> nodes) override { cpu_->reserve(nodes); }
    void set_threads(int n_threads) override { cpu_->set_threads(n_threads); }

    // Runs the CPU's kernels with every operand's address translated to host memory for
    // the duration of the call, then puts the device addresses back.
    void compute(std::span<Tensor* const> nodes) override {
        std::unordered_map<Tensor*, void*> saved;
        auto translate = [&](Tensor* t) {
            if (!t || saved.count(t)) return;
            if (t->data && !is_device_address(t->data))
                throw Error("{}: {} is not in its memory (a missing copy)", device_.name(), tensor_desc(*t));
            saved.emplace(t, t->data);
            if (t->data) t->data = to_host(t->data);
        };
        for (Tensor* n : nodes) {
            translate(n);
            for (Tensor* s : n->src) translate(s);
        }
        struct Restore {
            std::unordered_map<Tensor*, void*>& saved;
            ~Restore() {
                for (auto& [t, p] : saved) t->data = p;
            }
        } restore{saved};
        cpu_->compute(nodes);
    }

private:
    Device& device_;
    std::unique_ptr<Backend> cpu_;
};

class CopyThroughDevice final : public Device {
public:
    CopyThroughDevice(std::string name, size_t memory) : name_(std::move(name)), memory_(memory) {}

    std::string_view name() const override { return name_; }
    std::string description() const override { return "copy-through test device (CPU kernels on private memory)"; }
    DeviceMemory memory() const override { return {memory_, memory_}; }
    bool is_host() const override { return false; }
    std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override {
        void* p = std::aligned_alloc(Buffer::kAlign, Buffer::aligned_size(std::max<size_t>(bytes, 1)));
        if (!p) throw Error("{}: cannot allocate {:.1f} MiB", name_, static_cast<double>(bytes) / (1 << 20));
        return std::make_unique<PrivateBuffer>(*this, p, bytes);
    }
    std::unique_ptr<Backend> make_backend(int n_threads) override {
        return std::make_unique<CopyThroughBackend>(*this, n_threads);
    }

private:
    std::string name_;
    size_t memory_;
};

}  // namespace

std::unique_ptr<Device> make_copy_through_device(std::string name, size_t memory_bytes) {
    return std::make_unique<CopyThroughDevice>(std::move(name), memory_bytes);
}

}  // namespace pocket
