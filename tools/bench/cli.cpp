// `bench`: llama-bench's flags. Lists take comma-separated values (-t 1,2 -p 128,512).
#include "../common/command_line.hpp"
#include "../common/devices.hpp"
#include "bench.hpp"
#include "pocket/error.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

int main(int argc, char** argv) {
    CLI::App app{"bench: prompt-processing and generation speed (llama-bench's flags and output)"};
    pocket::tools::BenchOptions o;
    o.models.clear();
    app.add_option("-m,--model", o.models, "model file(s)")->required()->delimiter(',');
    app.add_option("-p,--n-prompt", o.n_prompt, "prompt tokens per pp test")->delimiter(',')->capture_default_str();
    app.add_option("-n,--n-gen", o.n_gen, "tokens per tg test")->delimiter(',')->capture_default_str();
    app.add_option("-t,--threads", o.threads, "threads")->delimiter(',')->capture_default_str();
    app.add_option("-b,--batch-size", o.n_batch, "logical batch size")->capture_default_str();
    app.add_option("--ubatch-size", o.n_ubatch, "physical batch size (-ub)")->capture_default_str();
    app.add_option("-r,--repetitions", o.repetitions, "repetitions of each test")->capture_default_str();
    app.add_option("-o,--output", o.output, "md, json, jsonl or csv")->check(CLI::IsMember({"md", "json", "jsonl", "csv"}))->capture_default_str();
    app.add_flag("--progress", o.progress, "a line per test on stderr");
    o.n_gpu_layers = {"auto"};
    app.add_option("--n-gpu-layers", o.n_gpu_layers, "layers on the GPU: N, all or auto (-ngl; lists: 0,99)")->delimiter(',');
    app.add_option("--device", o.device, "the GPU to use (-dev; see --list-devices)");
    bool no_repack = false, list_devices = false;
    app.add_flag("--no-repack", no_repack, "keep every weight in the file's layout");
    app.add_flag("--list-devices", list_devices, "print the available devices and exit");
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--list-devices") {  // before -m is required, as llama.cpp does
            std::cout << pocket::tools::device_list();
            return 0;
        }
    pocket::tools::CommandLine cl("bench", argc, argv, {{"-ub", "--ubatch-size"}, {"-ngl", "--n-gpu-layers"}, {"-dev", "--device"}});
    if (auto rc = cl.parse(app)) return *rc;
    spdlog::set_level(spdlog::level::warn);
    o.repack = !no_repack;
    try {
        pocket::tools::print_bench(pocket::tools::run_bench(o), o.output, std::cout);
    } catch (const pocket::Error& e) {
        std::cerr << "bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
