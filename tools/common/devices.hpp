#pragma once
// What run, perplexity and bench share about devices: --list-devices, the load progress
// line, the context size warning, and the lines printed once a model is placed (a warning,
// the placement, memory).
#include "pocket/context.hpp"
#include "pocket/device.hpp"
#include "pocket/model.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace pocket::tools {

// llama.cpp's --list-devices: one line per device, with its memory.
inline std::string device_list() {
    std::string out = "Available devices:\n";
    for (Device* d : devices()) {
        const DeviceMemory m = d->memory();
        out += fmt::format("  {}: {} ({:.0f} MiB, {:.0f} MiB free)\n", d->name(), d->description(),
                           static_cast<double>(m.total) / (1 << 20), static_cast<double>(m.free) / (1 << 20));
    }
    return out;
}

// A progress line for weights reaching a device, shown once loading has taken a second.
inline std::function<void(std::string_view, size_t, size_t)> load_progress(std::FILE* log) {
    const auto start = std::chrono::steady_clock::now();
    return [log, start, shown = false](std::string_view device, size_t done, size_t total) mutable {
        if (!shown && std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
        shown = true;
        fmt::print(log, "\rloading weights to {}: {:3.0f}%{}", device, total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0,
                   done >= total ? "\n" : "");
        std::fflush(log);
    };
}

// Before the context is allocated: a context longer than the model was trained for is
// allowed (llama.cpp warns too), but usually a typing error that costs memory.
inline void warn_context_size(const Model& model, uint64_t n_ctx, std::FILE* log) {
    const uint64_t trained = model.hparams().n_ctx_train;
    if (trained > 0 && n_ctx > trained)
        fmt::print(log, "warning: -c {} is more than the {} tokens the model was trained with\n", n_ctx, trained);
}

// After load: the -ngl warning when there is no GPU, where the layers went when a GPU is
// used, and one line of memory per device (llama.cpp's buffer sizes, shortened).
inline void report_placement(const Model& model, const Context& ctx, std::FILE* log) {
    const Placement& p = model.placement();
    if (!p.warning.empty()) fmt::print(log, "warning: {}\n", p.warning);
    if (p.devices.size() > 1) fmt::print(log, "{}\n", p.summary);
    fmt::print(log, "memory: {}\n", ctx.memory_summary());
}

}  // namespace pocket::tools
