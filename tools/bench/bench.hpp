#pragma once
// `bench`, like llama-bench: prompt processing (pp), token generation (tg) and both in one
// test (pg) speed of a model, for each combination of the listed parameters.
#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace pocket::tools {

struct BenchOptions {
    std::vector<std::string> models;
    std::vector<int> n_prompt{512};
    std::vector<int> n_gen{128};
    std::vector<std::pair<int, int>> pg{};           // -pg PP,TG: a prompt then a generation, timed together
    std::vector<int> n_depth{0};                     // -d: tokens in the context before each test (not timed)
    std::vector<int> threads{2};
    std::vector<std::string> n_gpu_layers{"auto"};  // -ngl: each N, all or auto
    std::string device;                              // -dev
    bool repack = true;                              // --no-repack
    std::vector<int> n_batch{2048};
    std::vector<int> n_ubatch{512};
    std::vector<int> flash_attn{-1};                 // -fa: 1 on, 0 off, -1 auto (one fused path in pocket)
    int repetitions = 5;
    std::string output = "md";  // md, json, jsonl, csv, sql
    bool progress = false;      // a line on stderr before each test
    bool bandwidth = false;     // --bandwidth: a memory read beside each tg test (read_probe.hpp)
};

struct BenchResult {
    std::string model_filename, model_type, isa;
    uint64_t model_size = 0, model_n_params = 0;
    std::string backends;  // "CPU", or "TEST0,CPU" when layers are on a GPU
    int n_gpu_layers = 0;  // layers on the GPU (the output counts as one)
    int n_threads = 0, n_prompt = 0, n_gen = 0, n_depth = 0, n_batch = 0, n_ubatch = 0, flash_attn = -1;
    std::vector<double> samples_ts;
    double avg_ts = 0, stddev_ts = 0;
    // Not in llama-bench: the wall time of the model load this test ran on (mapping, placement,
    // load-time repacks), and the process's peak resident memory when the test ended (a high
    // -water mark: with several models it covers every one loaded so far).
    double load_ms = 0;
    uint64_t peak_rss_bytes = 0;
    // The weights one decoded token reads (Model::bytes_read_per_token), and with --bandwidth,
    // after a tg test, how fast its threads read memory then (0 when not measured): the
    // test's weight reads per second against what the memory gave.
    uint64_t weight_bytes_per_token = 0;
    double read_bytes_per_s = 0;
};

std::vector<BenchResult> run_bench(const BenchOptions& options);
void print_bench(const std::vector<BenchResult>& results, const std::string& format, std::ostream& out);

// llama-bench's test name: "pp512", "tg128", "pp512+tg128", with " @ d1024" for a depth.
std::string bench_test_name(const BenchResult& r);

}  // namespace pocket::tools
