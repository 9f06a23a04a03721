#pragma once
// Progress of a quantization on stderr: a bar redrawn in place when stderr is a terminal,
// and with -v one line per tensor (name, shape, type in -> type out, sizes).
#include "pocket/quantize.hpp"

#include <chrono>
#include <cstdio>

namespace pocket::tools {

class ProgressReport : public QuantizeObserver {
public:
    ProgressReport(std::FILE* err, bool bar, bool verbose);

    void planned(const QuantizePlan& plan) override;
    void tensor_started(const TensorPlan& t, size_t index, size_t count) override;
    void rows_done(const TensorPlan& t, int64_t done, int64_t total) override;
    void tensor_finished(const TensorPlan& t, size_t index, size_t count) override;
    void clear();  // erases the bar (before an error message, or at the end)

private:
    void draw(const TensorPlan& t, uint64_t bytes_done, bool force);

    std::FILE* err_;
    bool bar_, verbose_;
    uint64_t total_bytes_ = 1, finished_bytes_ = 0;
    size_t index_ = 0, count_ = 0;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace pocket::tools
