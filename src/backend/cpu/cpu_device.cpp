// The CPU device: host buffers, CPU backends, and the weights it holds for a model. At load,
// the matrices of a type with a faster row-interleaved kernel on this CPU (Q4_0, Q8_0, Q2_K, Q3_K, Q4_K,
// Q5_K, Q6_K, IQ4_XS on AVX2 / AVX-VNNI / AVX-512) are repacked into a buffer whose layout only the CPU's
// mul_mat reads, and (with copy_mapped) the other weights are copied out of the mapped file
// into huge-page memory.
#include "backend/cpu/cpu_device.hpp"

#include "kernels/kernels.hpp"
#include "pocket/error.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
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
        void* p = std::aligned_alloc(Buffer::kAlign, Buffer::aligned_size(std::max<size_t>(size, 1)));
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
    // The x86 SIMD ISAs have the interleaved kernels; the scalar (and NEON) path gains nothing.
    if (isa != kernels::Isa::avx2 && isa != kernels::Isa::avxvnni && isa != kernels::Isa::avx512) return nullptr;
    if (w.ne[2] != 1 || w.ne[3] != 1 || !w.data) return nullptr;
    const kernels::RepackKernels* rk = kernels::repack_kernels(w.type);
    return rk && w.ne[1] % rk->rows_per_group == 0 ? rk : nullptr;
}

// Faults the pages of a file mapping in with one call before they are read (much cheaper
// than a page fault per 4 KiB; a hint: without it, reading faults them in as before).
void populate_mapping(const void* src, size_t n) {
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(src) / page * page;
    ::madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(src) + n - begin, MADV_POPULATE_READ);
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

    // Matrices of a type with a row-interleaved kernel are repacked; with copy_mapped, the
    // other weights are copied out of the mapped file into huge-page memory, vectors (norms,
    // biases) included: one read in place faults in the whole page-cache folio around it on
    // kernels with large folios, ~1.2 MiB of its released neighbours per norm (a 1B model's
    // 44 norms held 52 MiB of repacked matrices' file pages resident; bench/README.md). Both over the
    // load threads in pieces of about kPieceBytes of the file, each piece's file pages
    // faulted in before and released after it: a whole-tensor task held a large matrix twice
    // (file pages and copy; the 54 MiB output matrix of a 1B model) and left one thread
    // working alone on the last big tensor.
    std::vector<std::unique_ptr<Buffer>> load_weights(std::span<Tensor* const> weights, const WeightLoadOptions& options) override {
        constexpr size_t kPieceBytes = size_t{4} << 20;
        struct Job {
            Tensor* w;
            const kernels::RepackKernels* rk;  // null: a plain copy
            size_t offset;
        };
        struct Piece {
            size_t job;
            int64_t row0, rows;
        };
        std::vector<Job> jobs;
        std::vector<Piece> pieces;
        size_t packed_total = 0, copied_total = 0;
        for (Tensor* w : weights) {
            const kernels::RepackKernels* rk = options.repack ? repack_for(*w) : nullptr;
            if (rk) {
                jobs.push_back({w, rk, packed_total});
                packed_total += Buffer::aligned_size(rk->packed_bytes(w->ne[1], w->ne[0]));
            } else if (options.copy_mapped && w->data) {
                jobs.push_back({w, nullptr, copied_total});
                copied_total += Buffer::aligned_size(w->nbytes());
            } else {
                continue;
            }
            // Whole row groups for a repack (a range of groups packs to its own place), rows
            // for a copy (a 3-D tensor's rows are contiguous too: nrows() x nb[1]).
            const int64_t unit = rk ? rk->rows_per_group : 1, nrows = w->nrows();
            const int64_t step = std::max<int64_t>(unit, static_cast<int64_t>(kPieceBytes / w->nb[1]) / unit * unit);
            for (int64_t r = 0; r < nrows; r += step) pieces.push_back({jobs.size() - 1, r, std::min(step, nrows - r)});
        }
        std::vector<std::unique_ptr<Buffer>> out;
        if (jobs.empty()) return out;
        std::unique_ptr<Buffer> packed, copied;
        if (packed_total) packed = std::make_unique<RepackedBuffer>(*this, packed_total);
        if (copied_total) copied = std::make_unique<HostBuffer>(*this, copied_total);
        auto dst = [&](const Job& j) { return static_cast<uint8_t*>((j.rk ? packed : copied)->data()) + j.offset; };
        // Each thread takes the next piece; the result does not depend on who does it.
        std::atomic<size_t> next{0}, done{0};
        auto work = [&] {
            for (size_t i; (i = next++) < pieces.size();) {
                const Piece& p = pieces[i];
                const Job& j = jobs[p.job];
                const Tensor& w = *j.w;
                const size_t row_bytes = w.nb[1], bytes = row_bytes * static_cast<size_t>(p.rows);
                const uint8_t* src = static_cast<const uint8_t*>(w.data) + row_bytes * static_cast<size_t>(p.row0);
                populate_mapping(src, bytes);
                if (j.rk) j.rk->pack(src, row_bytes, p.rows, w.ne[0], dst(j) + j.rk->packed_bytes(p.row0, w.ne[0]));
                else std::memcpy(dst(j) + row_bytes * static_cast<size_t>(p.row0), src, bytes);
                if (options.release_source) options.release_source(src, bytes);
                done += bytes;
            }
        };
        const int n = std::clamp<int>(options.n_threads, 1, static_cast<int>(pieces.size()));
        std::vector<std::jthread> helpers;
        for (int t = 1; t < n; ++t) helpers.emplace_back(work);
        work();
        helpers.clear();
        if (options.progress) options.progress(done, done);
        for (const Job& j : jobs) {
            j.w->data = dst(j);
            j.w->buffer = j.rk ? packed.get() : copied.get();
        }
        if (packed) out.push_back(std::move(packed));
        if (copied) out.push_back(std::move(copied));
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
