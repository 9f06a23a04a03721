#include "progress.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace pocket::tools {
namespace {

constexpr int kBarWidth = 30;

std::string shape_of(const TensorPlan& t) {
    std::string s = "[";
    for (uint32_t i = 0; i < std::max<uint32_t>(t.n_dims, 1); ++i) s += fmt::format("{}{}", i ? ", " : "", t.ne[i]);
    return s + "]";
}

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

}  // namespace

ProgressReport::ProgressReport(std::FILE* err, bool bar, bool verbose) : err_(err), bar_(bar), verbose_(verbose) {}

void ProgressReport::planned(const QuantizePlan& plan) {
    uint64_t total = 0;
    for (const auto& t : plan.tensors) total += t.bytes_in;
    total_bytes_ = std::max<uint64_t>(total, 1);
}

void ProgressReport::tensor_started(const TensorPlan& t, size_t index, size_t count) {
    index_ = index;
    count_ = count;
    if (bar_) draw(t, finished_bytes_, true);
}

void ProgressReport::rows_done(const TensorPlan& t, int64_t done, int64_t total) {
    if (!bar_ || total <= 0) return;
    const auto part = static_cast<uint64_t>(static_cast<double>(t.bytes_in) * static_cast<double>(done) / static_cast<double>(total));
    draw(t, finished_bytes_ + part, false);
}

void ProgressReport::tensor_finished(const TensorPlan& t, size_t index, size_t count) {
    finished_bytes_ += t.bytes_in;
    if (verbose_) {
        clear();
        const int width = static_cast<int>(fmt::format("{}", count).size());
        fmt::print(err_, "[{:>{}}/{}] {:<36} {:<18} {:>7} -> {:<7} {:9.3f} MiB -> {:9.3f} MiB{}\n", index + 1, width, count,
                   t.name, shape_of(t), ggml_type_info(t.from).name, ggml_type_info(t.to).name, mib(t.bytes_in),
                   mib(t.bytes_out), t.fell_back ? "  (row length: fell back)" : "");
    }
    if (bar_) draw(t, finished_bytes_, true);
}

void ProgressReport::draw(const TensorPlan& t, uint64_t bytes_done, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;  // a terminal is slow to redraw
    last_draw_ = now;
    const double frac = std::min(1.0, static_cast<double>(bytes_done) / static_cast<double>(total_bytes_));
    const int filled = static_cast<int>(frac * kBarWidth);
    fmt::print(err_, "\r\033[K[{}{}] {:3.0f}% {}/{} {}", std::string(static_cast<size_t>(filled), '#'),
               std::string(static_cast<size_t>(kBarWidth - filled), ' '), frac * 100.0, index_ + 1, count_, t.name);
    std::fflush(err_);
    drawn_ = true;
}

void ProgressReport::clear() {
    if (!drawn_) return;
    fmt::print(err_, "\r\033[K");
    std::fflush(err_);
    drawn_ = false;
}

}  // namespace pocket::tools
