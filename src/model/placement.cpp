// -ngl and -dev turned into a Placement, once at load.
#include "pocket/placement.hpp"

#include "pocket/error.hpp"
#include "pocket/model.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>

namespace pocket {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Layer of a tensor by its GGUF name: blk.N.* -> N; output* -> n_layer; others -> -1 (host).
int layer_of_name(std::string_view name, uint32_t n_layer) {
    if (name.rfind("blk.", 0) == 0) {
        int l = -1;
        std::from_chars(name.data() + 4, name.data() + name.size(), l);
        return l;
    }
    if (name.rfind("output", 0) == 0) return static_cast<int>(n_layer);
    return -1;
}

}  // namespace

GpuLayers GpuLayers::parse(std::string_view text) {
    if (text == "all" || text == "-1") return all();
    if (text == "auto") return {};
    uint32_t n = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
        throw Error("-ngl: expected a number of layers, 'all' or 'auto', got '{}'", text);
    return layers(n);
}

std::string GpuLayers::text() const {
    switch (mode) {
        case Mode::all: return "all";
        case Mode::automatic: return "auto";
        default: return std::to_string(count);
    }
}

int Placement::device_index(int layer) const {
    if (layer < 0 || layer_device.empty()) return cpu_index();
    return layer_device[std::min<size_t>(static_cast<size_t>(layer), layer_device.size() - 1)];
}

Placement Placement::cpu_only(uint32_t n_layer) {
    Placement p;
    p.devices = {&cpu_device()};
    p.layer_device.assign(n_layer + 1, 0);
    p.summary = "all layers on the CPU";
    return p;
}

Placement plan_placement(const GgufFile& file, const HParams& hp, const PlacementRequest& request) {
    const uint32_t n_layer = hp.n_layer;
    if (request.gpu_layers.mode == GpuLayers::Mode::count && request.gpu_layers.count == 0 && request.device.empty()) {
        Placement p = Placement::cpu_only(n_layer);  // without looking for a GPU driver at all
        p.summary = "-ngl 0: all layers on the CPU";
        return p;
    }
    if (request.gpu_layers.mode == GpuLayers::Mode::automatic && request.device.empty() && no_gpu_hardware()) {
        Placement p = Placement::cpu_only(n_layer);
        p.summary = "-ngl auto: all layers on the CPU (no GPU device node on this machine)";
        return p;
    }
    const std::vector<Device*> gpus = gpu_devices();
    Device* gpu = nullptr;
    if (!request.device.empty()) {
        Device& d = find_device(request.device);
        if (!d.is_host()) gpu = &d;
    } else if (!gpus.empty()) {
        // A real GPU before an emulated one (lavapipe), which only an explicit -ngl N uses.
        auto real = std::find_if(gpus.begin(), gpus.end(), [](const Device* d) { return !d->emulated(); });
        gpu = real != gpus.end() ? *real : gpus.front();
    }
    const GpuLayers& want = request.gpu_layers;
    Placement p = Placement::cpu_only(n_layer);
    if (!gpu) {
        if (want.mode == GpuLayers::Mode::all || (want.mode == GpuLayers::Mode::count && want.count > 0)) {
            const std::string why = gpu_problem();
            p.warning = fmt::format("-ngl {}: no GPU device{}; running on the CPU", want.text(),
                                    why.empty() ? " in this build" : " (" + why + ")");
        }
        return p;
    }
    if (want.mode == GpuLayers::Mode::automatic && gpu->emulated()) {
        p.summary = fmt::format("-ngl auto: all layers on the CPU ({} emulates a GPU on the CPU; -ngl N uses it)", gpu->name());
        return p;
    }

    // Bytes each layer puts on the device: weights, KV cache (f16), and the output.
    std::vector<double> layer_bytes(n_layer + 1, 0.0), kept_bytes(n_layer + 1, 0.0);
    std::set<std::string_view> kept_types;
    bool has_output = false;
    // A weight of a type the GPU cannot decode stays on the CPU (Model's loader): not counted.
    for (const GgufTensorInfo& t : file.tensors()) {
        const int l = layer_of_name(t.name, n_layer);
        if (l >= 0 && static_cast<uint32_t>(l) <= n_layer) {
            const bool held = gpu->holds_weight_type(t.type);
            (held ? layer_bytes : kept_bytes)[static_cast<size_t>(l)] += static_cast<double>(t.n_bytes);
            if (!held) kept_types.insert(ggml_type_info(t.type).name);
        }
        if (t.name == "output.weight") has_output = true;
    }
    if (!has_output)  // tied embeddings: the output layer holds its own copy of the matrix
        if (const GgufTensorInfo* e = file.find_tensor("token_embd.weight"); e && gpu->holds_weight_type(e->type))
            layer_bytes[n_layer] += static_cast<double>(e->n_bytes);
    const double kv_per_layer = 2.0 * request.n_ctx * (hp.n_embd_k_gqa() + hp.n_embd_v_gqa());  // f16 K and V
    for (uint32_t l = 0; l < n_layer; ++l) layer_bytes[l] += kv_per_layer;
    const double arena = 4.0 * request.n_ubatch * (hp.n_vocab + 6.0 * hp.n_embd + 3.0 * hp.n_ff);

    uint32_t n = 0;  // layers from the end (the output first counts as the (n_layer+1)-th)
    switch (want.mode) {
        case GpuLayers::Mode::all: n = n_layer + 1; break;
        case GpuLayers::Mode::count: n = std::min(want.count, n_layer + 1); break;
        case GpuLayers::Mode::automatic: {
            const DeviceMemory mem = gpu->memory();
            const double budget = static_cast<double>(mem.free) - 0.05 * static_cast<double>(mem.total) - 64 * kMiB - arena;
            double used = 0;
            // -ngl k puts layers [n_layer - k, n_layer) there, and the output when k > n_layer.
            for (uint32_t k = 1; k <= n_layer + 1; ++k) {
                used += k <= n_layer ? layer_bytes[n_layer - k] : layer_bytes[n_layer];
                if (used > budget) break;
                n = k;
            }
            break;
        }
    }
    if (n == 0) {
        p.summary = fmt::format("-ngl {}: all layers on the CPU", want.text());
        return p;
    }
    p.devices = {gpu, &cpu_device()};
    p.layer_device.assign(n_layer + 1, 1);
    const uint32_t first = n_layer - std::min(n, n_layer);
    for (uint32_t l = first; l < n_layer; ++l) p.layer_device[l] = 0;
    if (n > n_layer) p.layer_device[n_layer] = 0;
    p.n_gpu_layers = n;
    double on_gpu = 0;
    for (uint32_t l = 0; l <= n_layer; ++l)
        if (p.layer_device[l] == 0) on_gpu += layer_bytes[l];
    p.summary = fmt::format("-ngl {}: {} of {} layers{} on {} ({:.1f} MiB with KV cache; {:.0f} MiB free)", want.text(),
                            std::min(n, n_layer), n_layer, n > n_layer ? " and the output" : "", gpu->name(), on_gpu / kMiB,
                            static_cast<double>(gpu->memory().free) / kMiB);
    double kept = 0;
    for (uint32_t l = 0; l <= n_layer; ++l)
        if (p.layer_device[l] == 0) kept += kept_bytes[l];
    if (kept > 0)
        p.summary += fmt::format("; {:.1f} MiB of {} weights stay on the CPU ({} has no kernels for them)", kept / kMiB,
                                 fmt::join(kept_types, "/"), gpu->name());
    return p;
}

}  // namespace pocket
