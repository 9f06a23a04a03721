#include "imatrix_command.hpp"

#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <fstream>
#include <sstream>

namespace pocket::tools {
namespace {

bool wants_dat(const ImatrixOptions& o) {
    if (o.output_format.empty()) return o.output.ends_with(".dat");
    if (o.output_format == "dat") return true;
    if (o.output_format == "gguf") return false;
    throw Error("--output-format {}: must be gguf or dat", o.output_format);
}

}  // namespace

ImatrixResult run_imatrix(const ImatrixOptions& o, const PerplexityProgress& progress) {
    ImatrixResult r;
    r.dat = wants_dat(o);
    if (o.text.empty() && o.in_files.empty()) throw Error("nothing to do: give a text (-f) or imatrix files to combine (--in-file)");
    if (o.n_ctx < 4) throw Error("-c {}: must be at least 4", o.n_ctx);
    std::vector<std::string_view> inputs{o.model, o.text};
    for (const std::string& f : o.in_files) inputs.push_back(f);
    for (std::string_view in : inputs)  // check_output_file takes a fixed list: one input at a time
        check_output_file(o.output, {in});

    ImatrixStats stats(static_cast<int32_t>(o.n_ctx), o.process_output);
    for (const std::string& f : o.in_files) stats.add_file(f);
    if (!o.text.empty()) {
        std::ifstream in(o.text, std::ios::binary);
        if (!in) throw Error("{}: cannot read the text", o.text);
        std::stringstream ss;
        ss << in.rdbuf();
        PerplexityOptions po;
        po.n_ctx = o.n_ctx;
        po.n_chunks = o.n_chunks;
        ContextOptions co = o.context;
        fit_chunks_to_batch(po, co);
        ModelLoadOptions load = o.load;
        load.n_ctx = co.n_ctx;
        load.n_ubatch = co.n_ubatch;
        load.n_threads = co.n_threads;
        auto model = Model::load(o.model, load);
        Context ctx(*model, co);
        const auto tokens = perplexity_tokens(*model, ss.str());
        ctx.observe_matmul_inputs([&stats](const MatmulInput& x) { stats.add(x); });
        const PerplexityResult pr = compute_perplexity(ctx, tokens, po, progress);
        r.n_chunks_evaluated = pr.n_chunks;
        r.ppl = pr.ppl;
        stats.add_dataset(o.text);
    }
    if (stats.entries().empty()) throw Error("{}: no matrix products were seen, nothing to write", o.model);
    if (r.dat) stats.save_dat(o.output);
    else stats.save_gguf(o.output);
    r.n_entries = stats.entries().size();
    r.chunk_count = stats.chunk_count();
    return r;
}

}  // namespace pocket::tools
