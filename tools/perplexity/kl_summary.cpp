#include "kl_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pocket::tools {

double percentile(const std::vector<float>& sorted, double p) {
    if (sorted.empty()) return 0.0;
    const double rank = p * static_cast<double>(sorted.size() - 1);
    return sorted[static_cast<size_t>(std::lround(rank))];
}

void print_kl_chunk_header(std::FILE* out) {
    fmt::print(out, "\nchunk {:>12} {:>22} {:>14} {:>10} {:>12}\n", "PPL", "ln(PPL(Q)/PPL(base))", "KL divergence", "Δp RMS",
               "Same top p");
}

void print_kl_chunk_row(size_t chunk, const KlStats::Chunk& c, std::FILE* out) {
    fmt::print(out, "{:5} {:12.4f} {:22.5f} {:14.5f} {:8.3f} % {:10.3f} %\n", chunk, c.ppl, c.ln_ratio, c.kld_mean, 100 * c.dp_rms,
               100 * c.same_top);
    std::fflush(out);
}

void print_kl_statistics(const KlStats& kl, std::FILE* out) {
    std::vector<float> kld = kl.kld_values, dp = kl.dp_values;
    std::sort(kld.begin(), kld.end());
    std::sort(dp.begin(), dp.end());
    fmt::print(out, "\n====== KL divergence statistics ======\n");
    fmt::print(out, "Mean    KLD: {:10.6f} ± {:.6f}\n", kl.kld_mean, kl.kld_stderr);
    fmt::print(out, "Maximum KLD: {:10.6f}\n", kld.empty() ? 0.0 : kld.back());
    const std::pair<const char*, double> kld_ranks[] = {{"99.9%", 0.999}, {"99.0%", 0.99}, {"Median", 0.5}, {"10.0%", 0.1},
                                                        {" 5.0%", 0.05},  {" 1.0%", 0.01}, {" 0.1%", 0.001}};
    for (const auto& [name, p] : kld_ranks) fmt::print(out, "{:<7} KLD: {:10.6f}\n", name, percentile(kld, p));
    fmt::print(out, "Minimum KLD: {:10.6f}\n", kld.empty() ? 0.0 : kld.front());

    fmt::print(out, "\n====== Token probability statistics ======\n");
    fmt::print(out, "Mean    Δp: {:+10.3f} ± {:.3f} %\n", 100 * kl.dp_mean, 100 * kl.dp_stderr);
    fmt::print(out, "Maximum Δp: {:+10.3f} %\n", dp.empty() ? 0.0 : 100 * dp.back());
    const std::pair<const char*, double> dp_ranks[] = {{"99.9%", 0.999}, {"99.0%", 0.99}, {"95.0%", 0.95}, {"90.0%", 0.9},
                                                       {"75.0%", 0.75},  {"Median", 0.5}, {"25.0%", 0.25}, {"10.0%", 0.1},
                                                       {" 5.0%", 0.05},  {" 1.0%", 0.01}, {" 0.1%", 0.001}};
    for (const auto& [name, p] : dp_ranks) fmt::print(out, "{:<7} Δp: {:+10.3f} %\n", name, 100 * percentile(dp, p));
    fmt::print(out, "Minimum Δp: {:+10.3f} %\n", dp.empty() ? 0.0 : 100 * dp.front());
    fmt::print(out, "RMS Δp    : {:10.3f} %\n", 100 * kl.dp_rms);
    fmt::print(out, "Same top p: {:10.3f} %\n", 100 * kl.same_top);
}

}  // namespace pocket::tools
