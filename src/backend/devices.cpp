// The device registry, and the default way a device takes a model's weights.
#include "backend/cpu/cpu_device.hpp"
#include "pocket/device.hpp"
#include "pocket/error.hpp"

#ifdef POCKET_HAVE_VULKAN
#include "backend/vulkan/vk_backend.hpp"
#endif
#ifdef POCKET_HAVE_CUDA
#include "backend/cuda/cuda_registry.hpp"
#endif

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

namespace pocket {

namespace {

bool same_name(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// The CPU is registered at once; GPU drivers are looked for on the first question about
// devices other than the CPU, so that a CPU-only run (-ngl 0) never loads one (lavapipe's
// LLVM alone costs 60 MiB and a tenth of a second).
struct Registry {
    std::mutex mutex;
    std::vector<std::unique_ptr<Device>> devices;
    std::string gpu_problem;
    bool searched = false;

    Registry() { devices.push_back(cpu::make_cpu_device()); }

    // Call with the mutex held.
    void search_once() {
        if (searched) return;
        searched = true;
        // GPU backends compiled into this binary register their devices here.
        // CUDA first: on an NVIDIA machine with both, CUDA0 is the faster and the default.
#ifdef POCKET_HAVE_CUDA
        std::string cuda_problem;
        for (auto& d : cuda::find_devices(cuda_problem)) devices.push_back(std::move(d));
#endif
#ifdef POCKET_HAVE_VULKAN
        for (auto& d : vulkan::find_devices(gpu_problem)) devices.push_back(std::move(d));
#endif
#ifdef POCKET_HAVE_CUDA
        if (!cuda_problem.empty()) gpu_problem = gpu_problem.empty() ? cuda_problem : cuda_problem + "; " + gpu_problem;
#endif
        // Debugging: POCKET_TEST_DEVICE=1 (or a size in MiB) adds the copy-through device.
        if (const char* v = std::getenv("POCKET_TEST_DEVICE"); v && *v && std::string_view(v) != "0") {
            const long mib = std::strtol(v, nullptr, 10);
            devices.push_back(make_copy_through_device("TEST0", mib > 1 ? static_cast<size_t>(mib) << 20 : size_t{4} << 30));
        }
    }
};

Registry& registry() {
    static Registry r;
    return r;
}

}  // namespace

std::vector<Device*> devices() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.search_once();
    std::vector<Device*> out;
    for (auto& d : r.devices) out.push_back(d.get());
    return out;
}

bool no_gpu_hardware() {
#ifdef __linux__
    {
        Registry& r = registry();
        std::lock_guard lock(r.mutex);
        if (r.searched || r.devices.size() > 1) return false;
    }
    if (const char* v = std::getenv("POCKET_TEST_DEVICE"); v && *v && std::string_view(v) != "0") return false;
    std::error_code ec;
    for (const char* node : {"/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"})
        if (std::filesystem::exists(node, ec)) return false;
    for (std::filesystem::directory_iterator it("/dev/dri", ec), end; !ec && it != end; it.increment(ec))
        if (it->path().filename().string().rfind("renderD", 0) == 0) return false;
    return true;
#else
    return false;  // no device nodes to tell by (macOS: MoltenVK)
#endif
}

std::string gpu_problem() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.search_once();
    return r.gpu_problem;
}

// The CPU is registered first and never removed.
Device& cpu_device() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    return *r.devices.front();
}

std::vector<Device*> gpu_devices() {
    std::vector<Device*> out;
    for (Device* d : devices())
        if (!d->is_host()) out.push_back(d);
    return out;
}

Device& find_device(std::string_view name) {
    std::string names;
    for (Device* d : devices()) {
        if (same_name(d->name(), name)) return *d;
        names += (names.empty() ? "" : ", ") + std::string(d->name());
    }
    throw Error("unknown device '{}' (available: {})", name, names);
}

void register_device(std::unique_ptr<Device> device) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.search_once();
    for (auto& d : r.devices)
        if (same_name(d->name(), device->name())) throw Error("device '{}' is already registered", device->name());
    r.devices.push_back(std::move(device));
}

void unregister_device(std::string_view name) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    std::erase_if(r.devices, [&](const auto& d) { return !d->is_host() && same_name(d->name(), name); });
}

void upload_weights(Buffer& buffer, std::span<Tensor* const> weights, const WeightLoadOptions& options, size_t& done,
                    size_t total) {
    for (Tensor* w : weights) {
        const void* host = w->data;
        const size_t n = w->nbytes();
        buffer.place(*w);
        buffer.write(w->data, host, n);
        if (options.release_source) options.release_source(host, n);
        done += n;
        if (options.progress) options.progress(done, total);
    }
}

std::vector<std::unique_ptr<Buffer>> Device::load_weights(std::span<Tensor* const> weights, const WeightLoadOptions& options) {
    std::vector<std::unique_ptr<Buffer>> out;
    if (weights.empty()) return out;
    size_t total = 0;
    for (const Tensor* w : weights) total += Buffer::aligned_size(w->nbytes());
    auto buffer = alloc_buffer(total);
    size_t done = 0;
    upload_weights(*buffer, weights, options, done, total);
    out.push_back(std::move(buffer));
    return out;
}

}  // namespace pocket
