#pragma once
// Placement: which device holds each layer's weights and KV cache and runs its ops. Decided
// once, at load, from -ngl and -dev, as llama.cpp does: the last N repeating layers go to
// the GPU, the rest stay on the CPU; N > n_layer also moves the output norm and matrix; the
// token embedding stays on the host (its lookup is a row gather). The model loader, the KV
// cache and the scheduler all read this one object; nothing else decides where a layer runs.
#include "pocket/device.hpp"
#include "pocket/gguf.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pocket {

struct HParams;

// The value of -ngl: a layer count, "all", or "auto" (as many as fit in free memory).
struct GpuLayers {
    enum class Mode { count, all, automatic };
    Mode mode = Mode::automatic;
    uint32_t count = 0;

    static GpuLayers all() { return {Mode::all, 0}; }
    static GpuLayers layers(uint32_t n) { return {Mode::count, n}; }
    // "12", "all", "auto" (also -1, llama.cpp's old "all"); throws pocket::Error naming -ngl.
    static GpuLayers parse(std::string_view text);
    std::string text() const;
};

struct PlacementRequest {
    GpuLayers gpu_layers;        // -ngl; auto is 0 when there is no GPU device
    std::string device;          // -dev: a GPU's name; empty: the first GPU
    // What -ngl auto must leave room for besides the weights: the KV cache of n_ctx cells
    // per layer (f16 K and V) and the compute arena of an n_ubatch-token batch.
    uint32_t n_ctx = 4096;
    uint32_t n_ubatch = 512;
};

struct Placement {
    std::vector<Device*> devices;   // devices used, the CPU last (the scheduler's fallback)
    std::vector<int> layer_device;  // per repeating layer, then one entry for the output: an index into devices
    uint32_t n_gpu_layers = 0;      // entries of layer_device on the GPU (the output counts as one)
    std::string summary;            // what was decided, one line (printed by the tools)
    std::string warning;            // non-empty when -ngl asked for a GPU this binary does not have

    int cpu_index() const { return static_cast<int>(devices.size()) - 1; }
    // Device index of a graph layer tag: < 0 (embeddings) is the CPU, >= n_layer the output.
    int device_index(int layer) const;
    Device& device_of(int layer) const { return *devices[static_cast<size_t>(device_index(layer))]; }

    // Everything on the CPU.
    static Placement cpu_only(uint32_t n_layer);
};

// Decides the placement for a model file. -ngl auto counts, per layer, the bytes of its
// tensors (blk.N.*), of its KV cache and a share of the compute arena, against the device's
// free memory less a margin of 5% of its total plus 64 MiB.
Placement plan_placement(const GgufFile& file, const HParams& hp, const PlacementRequest& request);

}  // namespace pocket
