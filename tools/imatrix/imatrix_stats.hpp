#pragma once
// Importance-matrix statistics as llama-imatrix gathers them: for each weight in the model's
// blocks (`blk.*`; `output.weight` only with --process-output), the sum over every input the
// model fed it of each column's square (per expert, for stacked expert weights), and how many
// inputs each expert saw. `quantize --imatrix` weighs each column by sum / count.
//
// Files: llama-imatrix's GGUF format (NAME.in_sum2 [n_in, n_mat] and NAME.counts [1, n_mat],
// F32; general.type "imatrix", imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size) and
// its legacy .dat (averages times the call count; see save_dat).
#include "pocket/context.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pocket::tools {

class ImatrixStats {
public:
    struct Entry {
        std::vector<float> sums;       // n_in * n_mat, accumulated in float as llama-imatrix does
        std::vector<int64_t> counts;   // n_mat
    };

    // chunk_size: tokens per chunk (-c), which turns counts into a chunk count.
    ImatrixStats(int32_t chunk_size, bool process_output);

    // A MatmulObserver: adds one product's inputs. Products of fewer than 16 tokens are left
    // out, as llama-imatrix leaves them. Throws pocket::Error on a non-finite sum.
    void add(const MatmulInput& in);
    // --in-file: adds a file's sums and counts (a legacy .dat's averages times chunk_size, as
    // llama-imatrix reads them) and its datasets.
    void add_file(const std::string& path);
    void add_dataset(std::string name) { datasets_.push_back(std::move(name)); }

    int32_t chunk_size() const { return chunk_size_; }
    int32_t chunk_count() const;  // the largest count / chunk_size
    const std::map<std::string, Entry>& entries() const { return entries_; }
    const std::vector<std::string>& datasets() const { return datasets_; }

    // Write through a temporary renamed into place (never a partial file under `path`).
    void save_gguf(const std::string& path) const;
    void save_dat(const std::string& path) const;

private:
    Entry& entry(std::string_view name, int64_t n_in, int64_t n_mat);

    int32_t chunk_size_;
    bool process_output_;
    std::map<std::string, Entry> entries_;
    std::vector<std::string> datasets_;
};

}  // namespace pocket::tools
