// `bench`: llama-bench's flags. Every parameter takes a comma-separated list, with ranges
// (-p 16-64+16, -p 16-256*2); each combination is one test.
#include "../common/command_line.hpp"
#include "../common/devices.hpp"
#include "bench.hpp"
#include "pocket/error.hpp"
#include "value_lists.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <iostream>

namespace {

// -fa: llama-bench's 0/1 and llama.cpp's on/off/auto.
std::vector<int> flash_attn_values(const std::vector<std::string>& items) {
    std::vector<int> out;
    for (const std::string& v : items) {
        if (v == "1" || v == "on") out.push_back(1);
        else if (v == "0" || v == "off") out.push_back(0);
        else if (v == "-1" || v == "auto") out.push_back(-1);
        else throw pocket::Error("-fa {}: must be 0, 1, on, off or auto", v);
    }
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    using pocket::tools::int_list;
    using pocket::tools::kMaxTokens;
    CLI::App app{"bench: prompt-processing and generation speed (llama-bench's flags and output)\n"
                 "Lists: -p 128,512; ranges: -p 16-64+16 (step), -p 16-256*2 (factor)"};
    app.get_formatter()->column_width(34);
    pocket::tools::BenchOptions o;
    o.models.clear();
    std::vector<std::string> p{"512"}, n{"128"}, pg, d{"0"}, t{"2"}, b{"2048"}, ub{"512"}, fa{"auto"};
    app.add_option("-m,--model", o.models, "model file(s)")->required()->delimiter(',');
    app.add_option("-p,--n-prompt", p, "prompt tokens per pp test")->delimiter(',')->default_str("512");
    app.add_option("-n,--n-gen", n, "tokens per tg test")->delimiter(',')->default_str("128");
    app.add_option("--pg", pg, "PP,TG: a prompt then a generation, timed together (-pg; repeatable)");
    app.add_option("-d,--n-depth", d, "tokens already in the context before each test")->delimiter(',')->default_str("0");
    app.add_option("-t,--threads", t, "threads")->delimiter(',')->default_str("2");
    app.add_option("-b,--batch-size", b, "logical batch size")->delimiter(',')->default_str("2048");
    app.add_option("--ubatch-size", ub, "physical batch size (-ub)")->delimiter(',')->default_str("512");
    app.add_option("--flash-attn", fa, "0, 1 or auto (-fa; 0: scores, softmax and values as separate ops)")->delimiter(',')->default_str("auto");
    app.add_option("-r,--repetitions", o.repetitions, "repetitions of each test")->default_str("5");
    app.add_option("-o,--output", o.output, "md, json, jsonl, csv or sql")
        ->check(CLI::IsMember({"md", "json", "jsonl", "csv", "sql"}))->default_str("md");
    app.add_flag("--progress", o.progress, "a line on stderr before each test");
    app.add_flag("--bandwidth", o.bandwidth, "after each tg test, a memory read on its threads: weights GB/s against it");
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
    pocket::tools::CommandLine cl("bench", argc, argv,
                                  {{"-ub", "--ubatch-size"}, {"-ngl", "--n-gpu-layers"}, {"-dev", "--device"}, {"-pg", "--pg"},
                                   {"-fa", "--flash-attn"}});
    if (auto rc = cl.parse(app)) return *rc;
    spdlog::set_level(spdlog::level::warn);
    o.repack = !no_repack;
    try {
        o.n_prompt = int_list("-p", p, 0, kMaxTokens);
        o.n_gen = int_list("-n", n, 0, kMaxTokens);
        o.n_depth = int_list("-d", d, 0, kMaxTokens);
        o.threads = int_list("-t", t, 1, pocket::tools::kMaxThreads);
        o.n_batch = int_list("-b", b, 1, kMaxTokens);
        o.n_ubatch = int_list("-ub", ub, 1, kMaxTokens);
        o.flash_attn = flash_attn_values(fa);
        for (const std::string& v : pg) o.pg.push_back(pocket::tools::pp_tg_pair(v));
        pocket::tools::print_bench(pocket::tools::run_bench(o), o.output, std::cout);
    } catch (const pocket::Error& e) {
        std::cerr << "bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
