#pragma once
// Devices: the places this binary can keep tensors and run ops. The CPU is always one; a GPU
// backend compiled in registers one device per GPU it finds (Vulkan0, CUDA0, ...).
//
//     for (pocket::Device* d : pocket::devices()) fmt::print("{}: {}\n", d->name(), d->description());
//     pocket::Device& gpu = pocket::find_device("Vulkan0");   // unknown name: Error listing the valid ones
//
// A device makes buffers of its memory, backends that run ops on it (one per Context: the
// CPU's carries the -t thread pool), and takes a model's weights at load (load_weights),
// when it may also lay them out its own way (the CPU's row-interleaved Q4_0).
//
// Tests, and POCKET_TEST_DEVICE=1 for debugging, add a copy-through device (TEST0): it runs
// the CPU's kernels on memory of its own that no other code can dereference, so that every
// byte it sees must have arrived through a placement, an upload or a scheduler copy. It is
// never in a user's list otherwise.
#include "pocket/backend.hpp"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

struct DeviceMemory {
    size_t free = 0;
    size_t total = 0;
};

struct WeightLoadOptions {
    int n_threads = 1;   // threads a device may use to prepare its layout
    bool repack = true;  // false (--no-repack): keep the file's layout
    // The weights are in a mapped file: the CPU may copy them into memory of its own (huge
    // pages: streaming weights through 4 KiB file pages costs a TLB miss per page).
    bool copy_mapped = false;
    // Called as bytes arrive (done, total), for a progress line.
    std::function<void(size_t done, size_t total)> progress;
    // Called (from any loading thread) once bytes of a weight (all of it, or a piece) are no
    // longer needed by the device, so that the mapped file's pages can leave memory as the
    // load goes.
    std::function<void(const void* data, size_t bytes)> release_source;
};

class Device {
public:
    virtual ~Device() = default;

    virtual std::string_view name() const = 0;       // "CPU", "Vulkan0", "TEST0"
    virtual std::string description() const = 0;     // e.g. the GPU's model name
    virtual DeviceMemory memory() const = 0;
    // True for the CPU: its buffers are host memory that any code may read directly.
    virtual bool is_host() const = 0;
    // True for a GPU API implemented on the CPU (Mesa's lavapipe): usable with -ngl N or
    // -dev, but -ngl auto never picks it (the CPU backend is faster on the same cores).
    virtual bool emulated() const { return false; }
    // Can this device's kernels read weights of type `t` (mul_mat, mul_mat_id, get_rows)? A
    // weight of a type it cannot read stays on the CPU, where its products then run (rather
    // than crossing the bus at every token).
    virtual bool holds_weight_type(GgmlType) const { return true; }

    // Memory on this device, aligned to Buffer::kAlign. Throws pocket::Error naming the
    // device and the size when it cannot.
    virtual std::unique_ptr<Buffer> alloc_buffer(size_t bytes) = 0;
    // A backend running ops on this device; n_threads is the CPU's thread pool (-t).
    virtual std::unique_ptr<Backend> make_backend(int n_threads) = 0;

    // Takes weights whose data is host memory (the mapped file) and that this device will
    // hold for a model's lifetime: copies them into its memory (or its own layout), sets
    // each tensor's data and buffer, and returns the buffers that now hold them. The default
    // uploads them into one buffer, one tensor at a time (streamed: the model is never held
    // in RAM twice). Weights a device leaves where they are keep their host memory.
    virtual std::vector<std::unique_ptr<Buffer>> load_weights(std::span<Tensor* const> weights,
                                                              const WeightLoadOptions& options);
};

// Places `weights` in `buffer` one after another and copies each one's host bytes there,
// calling options.release_source and options.progress as each lands (done counts on across
// calls). The default load_weights, and a device's own when it spreads weights over buffers.
void upload_weights(Buffer& buffer, std::span<Tensor* const> weights, const WeightLoadOptions& options, size_t& done,
                    size_t total);

// Every device, the CPU first, then the GPUs in the order their backends found them.
std::vector<Device*> devices();
// Why a GPU backend compiled into this binary found no usable device ("Vulkan: no driver
// (VK_ERROR_INCOMPATIBLE_DRIVER)"), or empty.
std::string gpu_problem();
Device& cpu_device();
// True when this machine cannot have a GPU: Linux without a DRM render node
// (/dev/dri/renderD*, what Mesa's drivers open), an NVIDIA device node or WSL's /dev/dxg, and
// no device registered or searched for yet. -ngl auto then skips the driver search: there,
// Vulkan's only driver is lavapipe, whose LLVM costs ~0.2 s and ~60 MiB to load for a device
// that auto never uses. -ngl N, -dev and --list-devices still search.
bool no_gpu_hardware();
// The devices other than the CPU.
std::vector<Device*> gpu_devices();
// By name (case-insensitive); throws pocket::Error "unknown device 'x' (available: CPU, ...)".
Device& find_device(std::string_view name);

// Adds a device (tests; a backend's registration at start-up) / removes one by name.
void register_device(std::unique_ptr<Device> device);
void unregister_device(std::string_view name);

// The copy-through test device described above, reporting `memory_bytes` free and total.
std::unique_ptr<Device> make_copy_through_device(std::string name = "TEST0", size_t memory_bytes = size_t{4} << 30);

}  // namespace pocket
