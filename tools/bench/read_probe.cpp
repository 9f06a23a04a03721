#include "read_probe.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace pocket::tools {

ReadProbe::ReadProbe(uint64_t bytes) : bytes_(bytes / 64 * 64), words_(new uint64_t[bytes_ / 8]) {
    std::fill_n(words_.get(), bytes_ / 8, uint64_t{1});  // every page resident before it is timed
}

double ReadProbe::bytes_per_second(int threads) const {
    const uint64_t n = bytes_ / 8;
    const auto share = [&](int i) { return n / 8 * static_cast<uint64_t>(i) / static_cast<uint64_t>(threads) * 8; };
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    // Four independent sums per thread: the adds never wait on each other, only on the loads.
    auto read = [&](int i) {
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        const uint64_t* w = words_.get();
        for (uint64_t k = share(i), end = share(i + 1); k < end; k += 4) s0 += w[k], s1 += w[k + 1], s2 += w[k + 2], s3 += w[k + 3];
        sums[static_cast<size_t>(i)] = s0 + s1 + s2 + s3;
    };
    double best = 0;
    for (int pass = 0; pass < 5; ++pass) {
        const auto t0 = std::chrono::steady_clock::now();
        std::vector<std::thread> pool;
        for (int i = 1; i < threads; ++i) pool.emplace_back(read, i);
        read(0);
        for (auto& t : pool) t.join();
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = std::max(best, static_cast<double>(bytes_) / s);
    }
    // The sums are used, so the reads cannot be left out.
    static std::atomic<uint64_t> sink;
    for (uint64_t v : sums) sink.fetch_add(v, std::memory_order_relaxed);
    return best;
}

}  // namespace pocket::tools
