#pragma once
// `bench`, like llama-bench: prompt processing (pp) and token generation (tg) speed of a
// model, for each combination of models, thread counts and test sizes.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace pocket::tools {

struct BenchOptions {
    std::vector<std::string> models;
    std::vector<int> n_prompt{512};
    std::vector<int> n_gen{128};
    std::vector<int> threads{2};
    std::vector<std::string> n_gpu_layers{"auto"};  // -ngl: each N, all or auto
    std::string device;                              // -dev
    bool repack = true;                              // --no-repack
    int n_batch = 2048;
    int n_ubatch = 512;
    int repetitions = 5;
    std::string output = "md";  // md, json, jsonl, csv
    bool progress = false;      // a line per test on stderr
};

struct BenchResult {
    std::string model_filename, model_type, isa;
    uint64_t model_size = 0, model_n_params = 0;
    std::string backends;  // "CPU", or "TEST0,CPU" when layers are on a GPU
    int n_gpu_layers = 0;  // layers on the GPU (the output counts as one)
    int n_threads = 0, n_prompt = 0, n_gen = 0, n_batch = 0, n_ubatch = 0;
    std::vector<double> samples_ts;
    double avg_ts = 0, stddev_ts = 0;
};

std::vector<BenchResult> run_bench(const BenchOptions& options);
void print_bench(const std::vector<BenchResult>& results, const std::string& format, std::ostream& out);

}  // namespace pocket::tools
