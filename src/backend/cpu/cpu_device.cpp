// The CPU device: host buffers, CPU backends, and the weights it holds for a model. Weights
// stay in the mapped file, except the matrices of a type with a faster row-interleaved
// kernel on this CPU (Q4_0 on AVX2 / AVX-512): those are repacked once, at load, over the
// load threads, into a buffer whose layout only the CPU's mul_mat reads.
#include "backend/cpu/cpu_device.hpp"

#include "kernels/kernels.hpp"
#include "pocket/error.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <sys/mman.h>
#include <unistd.h>

namespace pocket::cpu {

namespace {

// Large blocks come from mmap with transparent huge pages requested (THP is often in
// "madvise" mode): streaming hundreds of MiB of weights through 4 KiB pages costs a TLB miss
// every 4 KiB. Small blocks come from the heap.
constexpr size_t kHugePage = size_t{2} << 20;

class HostBuffer : public Buffer {
public:
    HostBuffer(Device& device, size_t size) : HostBuffer(device, size, allocate(size)) {}
    ~HostBuffer() override {
        if (mapped_) ::munmap(data(), mapped_);
        else std::free(data());
    }

private:
    struct Block {
        void* ptr;
        size_t mapped;  // bytes mapped, 0 for a heap block
    };
    HostBuffer(Device& device, size_t size, Block b) : Buffer(device, b.ptr, size), mapped_(b.mapped) {}
    static Block allocate(size_t size) {
        if (size >= 2 * kHugePage) {
            const size_t mapped = (size + kHugePage - 1) / kHugePage * kHugePage;
            void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p != MAP_FAILED) {
                ::madvise(p, mapped, MADV_HUGEPAGE);  // a hint: without THP the pages are just small
                return {p, mapped};
            }
        }
        const size_t rounded = (std::max<size_t>(size, 1) + Buffer::kAlign - 1) / Buffer::kAlign * Buffer::kAlign;
        void* p = std::aligned_alloc(Buffer::kAlign, rounded);
        if (!p) throw Error("CPU: cannot allocate {:.1f} MiB", static_cast<double>(size) / (1 << 20));
        return {p, 0};
    }
    size_t mapped_;
};

// Weights in the CPU's own layout (plain_layout() false: never copied, read by mul_mat only).
class RepackedBuffer final : public HostBuffer {
public:
    using HostBuffer::HostBuffer;
    bool plain_layout() const override { return false; }
};

// Whether the CPU repacks `w`: a 2-D matrix of a type with a SIMD row-interleaved kernel.
const kernels::RepackKernels* repack_for(const Tensor& w) {
    const kernels::Isa isa = kernels::active_isa();
    if (isa != kernels::Isa::avx2 && isa != kernels::Isa::avx512) return nullptr;  // the scalar path gains nothing
    if (w.ne[2] != 1 || w.ne[3] != 1 || !w.data) return nullptr;
    const kernels::RepackKernels* rk = kernels::repack_kernels(w.type);
    return rk && w.ne[1] % rk->rows_per_group == 0 ? rk : nullptr;
}

std::string cpu_model_name() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0)
            if (auto colon = line.find(':'); colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    return "CPU";
}

class CpuDevice final : public Device {
public:
    std::string_view name() const override { return "CPU"; }
    std::string description() const override {
        return cpu_model_name() + " (" + kernels::isa_name(kernels::active_isa()) + ", " +
               std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads)";
    }
    DeviceMemory memory() const override {
        const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        return {static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * page, static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * page};
    }
    bool is_host() const override { return true; }
    std::unique_ptr<Buffer> alloc_buffer(size_t bytes) override { return std::make_unique<HostBuffer>(*this, bytes); }
    std::unique_ptr<Backend> make_backend(int n_threads) override { return make_cpu_backend({.n_threads = n_threads}); }

    std::vector<std::unique_ptr<Buffer>> load_weights(std::span<Tensor* const> weights, const WeightLoadOptions& options) override {
        std::vector<std::unique_ptr<Buffer>> out;
        if (!options.repack) return out;
        std::vector<Tensor*> mine;
        std::vector<size_t> offset;
        size_t total = 0;
        for (Tensor* w : weights)
            if (const kernels::RepackKernels* rk = repack_for(*w)) {
                mine.push_back(w);
                offset.push_back(total);
                total += (rk->packed_bytes(w->ne[1], w->ne[0]) + Buffer::kAlign - 1) / Buffer::kAlign * Buffer::kAlign;
            }
        if (mine.empty()) return out;
        auto buffer = std::make_unique<RepackedBuffer>(*this, total);
        uint8_t* base = static_cast<uint8_t*>(buffer->data());
        // Each thread takes the next whole tensor; the layout does not depend on who packs it.
        std::atomic<size_t> next{0}, done{0};
        auto work = [&] {
            for (size_t i; (i = next++) < mine.size();) {
                const Tensor& w = *mine[i];
                repack_for(w)->pack(w.data, w.nb[1], w.ne[1], w.ne[0], base + offset[i]);
                if (options.release_source) options.release_source(w.data, w.nbytes());
                done += w.nbytes();
            }
        };
        const int n = std::clamp<int>(options.n_threads, 1, static_cast<int>(mine.size()));
        std::vector<std::jthread> helpers;
        for (int t = 1; t < n; ++t) helpers.emplace_back(work);
        work();
        helpers.clear();
        if (options.progress) options.progress(done, done);
        for (size_t i = 0; i < mine.size(); ++i) {
            mine[i]->data = base + offset[i];
            mine[i]->buffer = buffer.get();
        }
        out.push_back(std::move(buffer));
        return out;
    }
};

}  // namespace

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<CpuDevice>(); }

std::unique_ptr<Buffer> make_host_buffer(Device& device, size_t bytes) { return std::make_unique<HostBuffer>(device, bytes); }

const kernels::RepackKernels* repacked(const Tensor& w) {
    const Buffer* b = w.base()->buffer;
    return b && !b->plain_layout() && b->device().is_host() ? kernels::repack_kernels(w.type) : nullptr;
}

}  // namespace pocket::cpu
