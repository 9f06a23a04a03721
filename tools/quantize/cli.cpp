// `quantize`: llama-quantize's command line; this file only parses it.
//   quantize [options] IN.gguf OUT.gguf TYPE [nthreads]
//   quantize [options] IN.gguf TYPE [nthreads]          (writes ggml-model-TYPE.gguf beside IN)
#include "../common/command_line.hpp"
#include "../common/flag_checks.hpp"
#include "pocket/error.hpp"
#include "pocket/output_file.hpp"
#include "quantize_command.hpp"

#include <CLI/CLI.hpp>

#include <charconv>
#include <iostream>
#include <thread>

namespace {

std::string type_list() {
    std::string s;
    for (const auto& t : pocket::quant_file_types()) s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

std::optional<pocket::GgmlType> tensor_type(const std::string& flag, const std::string& name) {
    if (name.empty()) return std::nullopt;
    auto t = pocket::ggml_type_from_name(name);
    if (!t) throw CLI::ValidationError(flag, "'" + name + "' is not a ggml type (q4_0, q6_K, f16 ...)");
    return t;
}

int thread_count(const std::string& s) {
    int64_t n = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || p != s.data() + s.size())
        throw CLI::ValidationError("nthreads", "'" + s + "' is not a thread count (0 to " + std::to_string(pocket::tools::kMaxThreads) + ")");
    pocket::tools::check_threads("nthreads", n, /*zero_means_all=*/true);
    return static_cast<int>(n);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"quantize: convert a GGUF model to another type, as llama-quantize\n"
                 "  quantize [options] IN.gguf OUT.gguf TYPE [nthreads]\n"
                 "  quantize [options] IN.gguf TYPE [nthreads]   (writes ggml-model-TYPE.gguf beside IN)\n"
                 "TYPE: " + type_list() + " (Q3_K, Q4_K, Q5_K: the _M mixes)"};
    app.get_formatter()->column_width(34);
    pocket::tools::QuantizeCommand c;
    std::vector<std::string> args;
    std::string output_type, embedding_type;
    app.add_option("args", args, "IN.gguf [OUT.gguf] TYPE [nthreads]")->expected(2, 4)->required();
    app.add_flag("--pure", c.options.pure, "every matrix in TYPE's base type (no mix, no fallback but for row length)");
    app.add_option("--output-tensor-type", output_type, "type of output.weight (e.g. q8_0, f16)");
    app.add_option("--token-embedding-type", embedding_type, "type of token_embd.weight");
    app.add_flag("--leave-output-tensor", c.options.leave_output_tensor, "leave output.weight unquantized");
    app.add_option("--imatrix", c.imatrix_path, "importance matrix (llama-imatrix's GGUF or .dat)")->check(CLI::ExistingFile);
    app.add_flag("--allow-requantize", c.options.allow_requantize, "accept already-quantized input (dequantized first)");
    app.add_flag("-v,--verbose", c.verbose, "one line per tensor: its shape and chosen type");
    pocket::tools::CommandLine cl("quantize", argc, argv);
    if (auto rc = cl.parse(app)) return *rc;

    try {
        c.options.output_tensor_type = tensor_type("--output-tensor-type", output_type);
        c.options.token_embedding_type = tensor_type("--token-embedding-type", embedding_type);
        c.input = args[0];
        size_t next = 1;
        if (args.size() <= 3 && pocket::find_quant_file_type(args[1])) {  // IN TYPE [nthreads]
            c.type = pocket::find_quant_file_type(args[1]);
            c.output = pocket::tools::default_output_path(c.input, *c.type);
            next = 2;
        } else {
            if (args.size() < 3) throw CLI::ValidationError("TYPE", "missing (one of " + type_list() + ")");
            c.output = args[1];
            c.type = pocket::find_quant_file_type(args[2]);
            if (!c.type) throw CLI::ValidationError("TYPE", "'" + args[2] + "' is not one of " + type_list());
            next = 3;
        }
        if (next < args.size()) c.options.n_threads = thread_count(args[next]);
        if (next + 1 < args.size()) throw CLI::ValidationError("args", "unexpected '" + args[next + 1] + "'");
        if (c.options.n_threads == 0) c.options.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        pocket::remove_temporaries_on_signals();  // no .OUT.tmp.XXXXXX left by Ctrl-C
        pocket::tools::run_quantize(c, stdout, stderr);
        return 0;
    } catch (const pocket::Error& e) {
        std::cerr << "quantize: " << e.what() << "\n";
    } catch (const CLI::ValidationError& e) {
        std::cerr << "quantize: " << e.what() << "\n";
    }
    return 1;
}
