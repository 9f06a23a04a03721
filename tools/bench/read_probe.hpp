#pragma once
// bench --bandwidth: how fast this machine reads memory right now, measured beside each
// generation test so that the test's weight reads can be set against it on a machine whose
// bandwidth moves with its neighbours (the "STREAM-style read of the same run").
#include <cstdint>
#include <memory>

namespace pocket::tools {

class ReadProbe {
public:
    // Allocates and touches the buffer now (before any model), so that it sits in the peak
    // RSS as a constant: bench takes bytes() back out of the figure it reports.
    explicit ReadProbe(uint64_t bytes = uint64_t{256} << 20);
    uint64_t bytes() const { return bytes_; }
    // Bytes per second of the best of a few passes over the buffer, `threads` threads each
    // summing its contiguous share (as a matrix-vector product splits its rows).
    double bytes_per_second(int threads) const;

private:
    uint64_t bytes_;
    std::unique_ptr<uint64_t[]> words_;
};

}  // namespace pocket::tools
