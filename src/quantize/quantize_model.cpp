// The quantize driver: input mapped, plan made, metadata copied, tensors streamed out a slab
// of rows at a time through GgufWriter (which renames a finished temporary onto the target).
#include "kernels/kernels.hpp"
#include "pocket/error.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/output_file.hpp"
#include "pocket/quantize.hpp"
#include "row_pool.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace pocket {
namespace {

// Rows handed to one thread at a time: at least 16 Ki elements, llama.cpp's chunk, so that
// small rows do not cost a lock each.
constexpr int64_t kChunkElements = 32 * 512;
// Rows converted before they are written: ~8 Mi elements, a few tens of MiB at most.
constexpr int64_t kSlabElements = int64_t{8} << 20;
// Unconverted tensors are copied in pieces of this size, so that progress keeps moving.
constexpr uint64_t kCopyPiece = uint64_t{64} << 20;

constexpr std::string_view kSplitKeys[] = {"split.no", "split.count", "split.tensors.count"};

// llama-quantize stores these strings through a 128-byte buffer.
std::string truncated(std::string_view s) { return std::string(s.substr(0, 127)); }

// llama-quantize's order, so that the files are byte-identical: the input's keys, then
// quantization_version and file_type at the end (ggml's gguf_set_val removes a key and
// appends it), then the imatrix's keys.
void copy_metadata(const GgufFile& in, const QuantizePlan& plan, const QuantizeOptions& o, GgufWriter& w) {
    for (const auto& kv : in.metadata())
        if (std::find(std::begin(kSplitKeys), std::end(kSplitKeys), kv.key) == std::end(kSplitKeys) &&
            kv.key != "general.quantization_version" && kv.key != "general.file_type")
            w.set_value(kv.key, kv.value);
    w.set<uint32_t>("general.quantization_version", 2);  // GGML_QNT_VERSION
    w.set<uint32_t>("general.file_type", plan.file_type);
    if (o.imatrix && !o.imatrix->values.empty()) {
        const Imatrix& m = *o.imatrix;
        w.set_string("quantize.imatrix.file", truncated(m.path));
        if (!m.datasets.empty()) w.set_string("quantize.imatrix.dataset", truncated(m.datasets.front()));
        w.set<uint32_t>("quantize.imatrix.entries_count", static_cast<uint32_t>(m.values.size()));
        if (m.chunk_count > 0) w.set<uint32_t>("quantize.imatrix.chunks_count", static_cast<uint32_t>(m.chunk_count));
    }
}

class TensorConverter {
public:
    TensorConverter(const std::string& path, quantize::RowPool& pool) : path_(path), pool_(pool), scratch_(pool.n_threads()) {}

    // Converts p slab by slab, writing each slab as soon as it is done.
    void convert(const TensorPlan& p, GgufWriter& w, QuantizeObserver* observer) {
        const int64_t ne0 = p.ne[0], n_rows = p.n_rows();
        const auto* to = kernels::type_kernels(p.to);
        const auto* from = kernels::type_kernels(p.from);
        const size_t row_in = *ggml_row_bytes(p.from, static_cast<uint64_t>(ne0));
        const size_t row_out = *ggml_row_bytes(p.to, static_cast<uint64_t>(ne0));
        const int64_t chunk = std::max<int64_t>(1, kChunkElements / std::max<int64_t>(ne0, 1));
        const int64_t slab = std::max<int64_t>(chunk, kSlabElements / std::max<int64_t>(ne0, 1) / chunk * chunk);
        out_.resize(static_cast<size_t>(std::min(slab, n_rows)) * row_out);
        for (auto& s : scratch_) s.resize(static_cast<size_t>(ne0));
        const uint8_t* src = p.source->data;

        for (int64_t r0 = 0; r0 < n_rows; r0 += slab) {
            const int64_t n = std::min(slab, n_rows - r0);
            pool_.run(n, chunk, [&](int64_t first, int64_t count, int worker) {
                float* row = scratch_[static_cast<size_t>(worker)].data();
                for (int64_t r = first; r < first + count; ++r) {
                    const int64_t global = r0 + r;
                    const uint8_t* in = src + static_cast<size_t>(global) * row_in;
                    if (p.from == GgmlType::F32) std::memcpy(row, in, row_in);  // the mapping may not be float-aligned
                    else from->dequantize_row(in, row, ne0);
                    // llama.cpp validates what it wrote; a non-finite weight is where that fails.
                    for (int64_t i = 0; i < ne0; ++i)
                        if (!std::isfinite(row[i]))
                            throw Error("{}: tensor '{}' holds a NaN or infinity (row {}, column {})", path_, p.name, global, i);
                    // 3-D tensors (experts) have one imatrix row per expert.
                    const float* imatrix = p.imatrix ? p.imatrix + (global / p.ne[1]) % p.ne[2] * ne0 : nullptr;
                    to->quantize_row(row, out_.data() + static_cast<size_t>(r) * row_out, ne0, imatrix);
                }
            });
            w.write(out_.data(), static_cast<size_t>(n) * row_out);
            if (observer) observer->rows_done(p, r0 + n, n_rows);
        }
    }

private:
    const std::string& path_;
    quantize::RowPool& pool_;
    std::vector<std::vector<float>> scratch_;
    std::vector<uint8_t> out_;
};

void copy_tensor(const TensorPlan& p, GgufWriter& w, QuantizeObserver* observer) {
    const int64_t n_rows = p.n_rows();
    for (uint64_t done = 0; done < p.bytes_in;) {
        const uint64_t n = std::min(kCopyPiece, p.bytes_in - done);
        w.write(p.source->data + done, static_cast<size_t>(n));
        done += n;
        if (observer) observer->rows_done(p, static_cast<int64_t>(static_cast<double>(done) / static_cast<double>(p.bytes_in) * static_cast<double>(n_rows)), n_rows);
    }
}

// Drops a finished tensor's pages of the input mapping from this process, so that resident
// memory stays near one tensor instead of growing to the whole input (llama.cpp unmaps each
// weight likewise). The mapping is read-only and private: the pages are only forgotten and
// would be read from the file again if touched.
void release_input(const TensorPlan& p) {
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<uintptr_t>(p.source->data) + page - 1) / page * page;
    const auto end = (reinterpret_cast<uintptr_t>(p.source->data) + p.bytes_in) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace

QuantizeResult quantize_model(const std::string& input, const std::string& output, const QuantFileType& type,
                              const QuantizeOptions& options, QuantizeObserver* observer) {
    const auto t0 = std::chrono::steady_clock::now();
    check_output_file(output, {input});
    const GgufFile in = GgufFile::open(input, {.use_mmap = true});  // release_input() needs a mapping

    QuantizeResult result;
    result.plan = plan_quantization(in, type, options);
    const QuantizePlan& plan = result.plan;

    GgufWriter w(output, in.alignment());
    copy_metadata(in, plan, options, w);
    for (const auto& p : plan.tensors) {
        w.add_tensor(p.name, p.to, std::span<const int64_t>(p.ne.data(), std::max<uint32_t>(p.n_dims, 1)));
        result.input_tensor_bytes += p.bytes_in;
        result.output_tensor_bytes += p.bytes_out;
        result.n_elements += static_cast<uint64_t>(p.ne[0] * p.ne[1] * p.ne[2] * p.ne[3]);
    }
    w.begin();
    if (observer) observer->planned(plan);

    const int n_threads = options.n_threads > 0 ? options.n_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    quantize::RowPool pool(n_threads);
    TensorConverter converter(input, pool);
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
        const TensorPlan& p = plan.tensors[i];
        if (observer) observer->tensor_started(p, i, plan.tensors.size());
        if (p.converted()) converter.convert(p, w, observer);
        else copy_tensor(p, w, observer);
        release_input(p);
        if (observer) observer->tensor_finished(p, i, plan.tensors.size());
    }
    w.finish();

    result.input_file_bytes = in.file_size();
    result.output_file_bytes = std::filesystem::file_size(output);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
}

}  // namespace pocket
