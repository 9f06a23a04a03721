#include "quantize_command.hpp"

#include "pocket/output_file.hpp"
#include "progress.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <unistd.h>

namespace pocket::tools {
namespace {

double mib(uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
double bpw(uint64_t bytes, uint64_t n) { return n ? 8.0 * static_cast<double>(bytes) / static_cast<double>(n) : 0.0; }

// --dry-run: llama-quantize's per-tensor lines and the sizes, from the plan alone.
void print_dry_run(const QuantizeCommand& c, const QuantizePlan& plan, std::FILE* out) {
    uint64_t in_bytes = 0, out_bytes = 0, n = 0;
    const size_t width = std::to_string(plan.tensors.size()).size();
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const TensorPlan& t = plan.tensors[i];
        fmt::print(out, "[{:>{}}/{}] {:<40} [{:>6}, {:>6}, {:>4}, {:>4}] {:>6} -> {:<6} {:9.3f} MiB -> {:9.3f} MiB{}\n", i + 1, width,
                   plan.tensors.size(), t.name, t.ne[0], t.ne[1], t.ne[2], t.ne[3], ggml_type_info(t.from).name,
                   ggml_type_info(t.to).name, mib(t.bytes_in), mib(t.bytes_out), t.fell_back ? " (row length: fell back)" : "");
        in_bytes += t.bytes_in;
        out_bytes += t.bytes_out;
        n += static_cast<uint64_t>(t.ne[0] * t.n_rows());
    }
    fmt::print(out, "quantize: dry run of {} as {} (general.file_type {}): tensors {:.2f} MiB -> {:.2f} MiB = {:.3f} bits per weight; "
                    "nothing written\n", c.input, c.type->name, plan.file_type, mib(in_bytes), mib(out_bytes), bpw(out_bytes, n));
}

}  // namespace

std::string default_output_path(const std::string& input, const QuantFileType& type) {
    const std::filesystem::path dir = std::filesystem::path(input).parent_path();
    return (dir / ("ggml-model-" + std::string(type.name) + ".gguf")).string();
}

void run_quantize(QuantizeCommand& c, std::FILE* out, std::FILE* err) {
    // Before any work: the output must not be the model or the imatrix, and must be writable
    // (a dry run writes nothing, so its output may be anything).
    if (!c.dry_run) check_output_file(c.output, {c.input, c.imatrix_path});
    std::optional<Imatrix> imatrix;
    if (!c.imatrix_path.empty()) {
        imatrix = load_imatrix(c.imatrix_path);
        c.options.imatrix = &*imatrix;
        fmt::print(err, "quantize: imatrix {}: {} entries, {} chunks{}\n", c.imatrix_path, imatrix->values.size(),
                   imatrix->chunk_count, imatrix->datasets.empty() ? "" : ", dataset " + imatrix->datasets.front());
    }
    if (c.dry_run) {
        print_dry_run(c, plan_quantization(GgufFile::open(c.input), *c.type, c.options), out);
        return;
    }
    ProgressReport progress(err, ::isatty(::fileno(err)) == 1, c.verbose);
    QuantizeResult r;
    try {
        r = quantize_model(c.input, c.output, *c.type, c.options, &progress);
    } catch (...) {
        progress.clear();
        throw;
    }
    progress.clear();

    size_t n_converted = 0;
    for (const auto& t : r.plan.tensors) n_converted += t.converted();
    fmt::print(out, "quantize: {} -> {} as {} (general.file_type {})\n", c.input, c.output, c.type->name, r.plan.file_type);
    fmt::print(out, "  input:  {:10.2f} MiB file, tensors {:10.2f} MiB = {:6.3f} bits per weight\n", mib(r.input_file_bytes),
               mib(r.input_tensor_bytes), bpw(r.input_tensor_bytes, r.n_elements));
    fmt::print(out, "  output: {:10.2f} MiB file, tensors {:10.2f} MiB = {:6.3f} bits per weight\n", mib(r.output_file_bytes),
               mib(r.output_tensor_bytes), bpw(r.output_tensor_bytes, r.n_elements));
    fmt::print(out, "  tensors: {} of {} converted", n_converted, r.plan.tensors.size());
    if (r.plan.n_fallback) fmt::print(out, ", {} fell back to a 32-block type (row length)", r.plan.n_fallback);
    fmt::print(out, "\n  time:   {:.2f} s with {} thread{}\n", r.seconds, c.options.n_threads,
               c.options.n_threads == 1 ? "" : "s");
}

}  // namespace pocket::tools
