// `quantize`: llama-quantize's command line; this file only parses it.
//   quantize [options] IN.gguf OUT.gguf TYPE [nthreads]
//   quantize [options] IN.gguf TYPE [nthreads]          (writes ggml-model-TYPE.gguf beside IN)
#include "../common/command_line.hpp"
#include "../common/flag_checks.hpp"
#include "pocket/error.hpp"
#include "pocket/output_file.hpp"
#include "quantize_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <regex>
#include <iostream>
#include <thread>

namespace {

std::string type_list() {
    std::string s;
    for (const auto& t : pocket::quant_file_types()) s += (s.empty() ? "" : ", ") + std::string(t.name);
    return s;
}

// llama-quantize's list: the llama_ftype id, the name, and here the bits per weight of the
// type most matrices get (a mix gives some tensors more).
std::string type_table() {
    std::string s = "Allowed quantization types:\n";
    for (const auto& t : pocket::quant_file_types()) {
        if (t.copy) {
            s += fmt::format("  {:>3}  or  {:<8}: only copy tensors, no quantizing\n", "", t.name);
            continue;
        }
        const auto& info = pocket::ggml_type_info(t.default_type);
        const double bpw = 8.0 * static_cast<double>(info.block_bytes) / static_cast<double>(info.block_size);
        s += fmt::format("  {:>3}  or  {:<9}: {:5.2f} bits per weight in most matrices ({})\n", t.id, t.name, bpw, info.name);
    }
    return s + "Q3_K, Q4_K and Q5_K name the _M mixes; TYPE may also be the id.";
}

std::optional<pocket::GgmlType> tensor_type(const std::string& flag, const std::string& name) {
    if (name.empty()) return std::nullopt;
    auto t = pocket::ggml_type_from_name(name);
    if (!t) throw CLI::ValidationError(flag, "'" + name + "' is not a ggml type (q4_0, q6_K, f16 ...)");
    return t;
}

// --tensor-type PATTERN=TYPE, llama-quantize's: PATTERN a regex, TYPE a ggml type name.
std::pair<std::string, pocket::GgmlType> tensor_type_override(const std::string& spec) {
    const size_t eq = spec.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
        throw CLI::ValidationError("--tensor-type", "'" + spec + "' is not PATTERN=TYPE (e.g. attn_v=q8_0)");
    std::string pattern = spec.substr(0, eq);
    std::transform(pattern.begin(), pattern.end(), pattern.begin(), [](unsigned char ch) { return std::tolower(ch); });
    try {
        std::regex check(pattern);
    } catch (const std::regex_error&) {
        throw CLI::ValidationError("--tensor-type", "'" + pattern + "' is not a valid regular expression");
    }
    const auto type = tensor_type("--tensor-type", spec.substr(eq + 1));
    return {pattern, *type};
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
                 "  quantize [options] IN.gguf TYPE [nthreads]   (writes ggml-model-TYPE.gguf beside IN)"};
    app.footer(type_table());
    app.get_formatter()->column_width(34);
    pocket::tools::QuantizeCommand c;
    std::vector<std::string> args;
    std::string output_type, embedding_type;
    app.add_option("args", args, "the model, the output (optional), the type and the thread count (optional)")
        ->expected(2, 4)->required()->option_text("IN.gguf [OUT.gguf] TYPE [nthreads]");
    app.add_flag("--pure", c.options.pure, "every matrix in TYPE's base type (no mix, no fallback but for row length)");
    app.add_option("--output-tensor-type", output_type, "type of output.weight (e.g. q8_0, f16)");
    app.add_option("--token-embedding-type", embedding_type, "type of token_embd.weight");
    app.add_flag("--leave-output-tensor", c.options.leave_output_tensor, "leave output.weight unquantized");
    app.add_option("--imatrix", c.imatrix_path, "importance matrix (llama-imatrix's GGUF or .dat)")->check(CLI::ExistingFile);
    app.add_flag("--allow-requantize", c.options.allow_requantize, "accept already-quantized input (dequantized first)");
    app.add_flag("-v,--verbose", c.verbose, "one line per tensor: its shape and chosen type");
    std::vector<std::string> tensor_types;
    app.add_option("--tensor-type", tensor_types, "PATTERN=TYPE: tensors whose name matches the regex PATTERN get TYPE (repeatable; the first match wins)")
        ->allow_extra_args(false);  // one value per --tensor-type: IN.gguf after it is not a pattern
    app.add_flag("--dry-run", c.dry_run, "print each tensor's type and size, and the model's, without writing anything");
    pocket::tools::CommandLine cl("quantize", argc, argv);
    if (auto rc = cl.parse(app)) return *rc;

    try {
        c.options.output_tensor_type = tensor_type("--output-tensor-type", output_type);
        c.options.token_embedding_type = tensor_type("--token-embedding-type", embedding_type);
        for (const std::string& spec : tensor_types) c.options.tensor_types.push_back(tensor_type_override(spec));
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
