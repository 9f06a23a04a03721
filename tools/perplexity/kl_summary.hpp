#pragma once
// llama-perplexity's KL-divergence report, for those who compare it line by line: the
// running table, a row as each chunk is done, then the percentiles of the KL divergence and of Δp.
#include "perplexity.hpp"

#include <cstdio>

namespace pocket::tools {

void print_kl_chunk_header(std::FILE* out);
void print_kl_chunk_row(size_t chunk, const KlStats::Chunk& c, std::FILE* out);  // chunk counts from 1
void print_kl_statistics(const KlStats& kl, std::FILE* out);

// The value below which a fraction `p` of `sorted` lies (nearest rank, 0 <= p <= 1).
double percentile(const std::vector<float>& sorted, double p);

}  // namespace pocket::tools
