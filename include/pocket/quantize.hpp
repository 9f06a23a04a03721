#pragma once
// Quantization of a GGUF model, as llama-quantize does it (llama.cpp's src/llama-quant.cpp):
// the same type names and llama_ftype ids, the same per-tensor type choice (the _S/_M/_L
// mixes, the fallbacks for rows that are not a multiple of 256, the imatrix-dependent
// choices), and bytes from the kernels' quantizers, which reproduce ggml's.
//
//     auto ft = pocket::find_quant_file_type("Q4_K_M");
//     pocket::quantize_model("in-f16.gguf", "out.gguf", *ft, {.n_threads = 4});
//
// The input is read from its mapping and the output streamed through GgufWriter, a slab of
// rows at a time: memory stays near one slab per thread, never a whole model. The output
// appears under its name only once complete (GgufWriter renames a finished temporary).
#include "pocket/ggml_type.hpp"
#include "pocket/gguf.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pocket {

// A target of `quantize IN OUT TYPE`: one of llama.cpp's llama_ftype values.
struct QuantFileType {
    std::string_view name;   // "Q4_K_M", as llama-quantize spells it
    uint32_t id;             // the llama_ftype id, written to general.file_type
    GgmlType default_type;   // the type most matrices get
    bool copy = false;       // COPY: every tensor is copied unchanged
};

// The targets pocket can produce, in llama-quantize's order.
std::span<const QuantFileType> quant_file_types();
// By name (case-insensitive; Q3_K, Q4_K and Q5_K are the _M mixes, as in llama.cpp) or by
// llama_ftype number; nullptr when unknown.
const QuantFileType* find_quant_file_type(std::string_view name);

// An importance matrix: per tensor, the mean of the squared input activation of each column
// (llama-imatrix's output, read from its GGUF format or the legacy .dat format).
struct Imatrix {
    std::string path;
    std::map<std::string, std::vector<float>, std::less<>> values;
    std::vector<std::string> datasets;
    int chunk_count = 0;       // 0 when the file does not say
    bool legacy = false;       // read from the .dat format
    // What the file stores, before any division, for merging files (imatrix --in-file): GGUF,
    // the sums and the count of each expert; .dat, the averages times the call count, and
    // {the call count}.
    struct Stored {
        std::vector<float> sums, counts;
    };
    std::map<std::string, Stored, std::less<>> stored;
};
// Reads either format (GGUF first, then .dat); throws pocket::Error naming the file.
Imatrix load_imatrix(const std::string& path);

struct QuantizeOptions {
    int n_threads = 0;                          // 0: all hardware threads
    bool pure = false;                          // --pure: the default type for every matrix
    bool leave_output_tensor = false;           // --leave-output-tensor
    bool allow_requantize = false;              // --allow-requantize
    std::optional<GgmlType> output_tensor_type{};     // --output-tensor-type
    std::optional<GgmlType> token_embedding_type{};   // --token-embedding-type
    const Imatrix* imatrix = nullptr;           // --imatrix
    // --tensor-type PATTERN=TYPE, as llama-quantize: the first PATTERN (a regular expression
    // found anywhere in the tensor's name) sets the type over the mix's choice; a row length
    // the type cannot take still falls back. Not with --pure or an unquantized TYPE (llama.cpp).
    std::vector<std::pair<std::string, GgmlType>> tensor_types{};
};

// What happens to one tensor.
struct TensorPlan {
    std::string name;
    std::array<int64_t, 4> ne{1, 1, 1, 1};
    uint32_t n_dims = 0;
    GgmlType from = GgmlType::F32;
    GgmlType to = GgmlType::F32;
    bool fell_back = false;                 // its row length forced a 32-block type
    const float* imatrix = nullptr;         // ne[0] * ne[2] weights, or null
    const GgufTensorInfo* source = nullptr; // in the input file
    uint64_t bytes_in = 0, bytes_out = 0;
    bool converted() const { return from != to; }
    int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
};

struct QuantizePlan {
    uint32_t file_type = 0;             // general.file_type of the output
    std::vector<TensorPlan> tensors;    // in output order (llama.cpp's: by layer, then name)
    size_t n_fallback = 0;
};

// Chooses every tensor's type, as llama_tensor_get_type does, and checks the whole job
// before anything is written: requantizing without allow_requantize, a type that needs an
// imatrix without one, an imatrix of the wrong size, a row no type fits. Throws
// pocket::Error naming the file and the tensor.
QuantizePlan plan_quantization(const GgufFile& in, const QuantFileType& type, const QuantizeOptions& options);

// Progress of quantize_model, for a tool's progress bar. Called from the calling thread.
class QuantizeObserver {
public:
    virtual ~QuantizeObserver() = default;
    virtual void planned(const QuantizePlan&) {}  // before the first tensor
    virtual void tensor_started(const TensorPlan&, size_t /*index*/, size_t /*count*/) {}
    virtual void rows_done(const TensorPlan&, int64_t /*done*/, int64_t /*total*/) {}
    virtual void tensor_finished(const TensorPlan&, size_t /*index*/, size_t /*count*/) {}
};

struct QuantizeResult {
    QuantizePlan plan;
    uint64_t input_file_bytes = 0, output_file_bytes = 0;
    uint64_t input_tensor_bytes = 0, output_tensor_bytes = 0;
    uint64_t n_elements = 0;            // of all tensors: bits per weight = 8 * bytes / n_elements
    double seconds = 0;
};

// Quantizes `input` into `output`. Metadata is copied; general.file_type and
// general.quantization_version (2) are set, split.* keys dropped, and with an imatrix the
// quantize.imatrix.* keys added as llama-quantize adds them. Throws pocket::Error; on any
// failure nothing is left under `output`.
QuantizeResult quantize_model(const std::string& input, const std::string& output, const QuantFileType& type,
                              const QuantizeOptions& options = {}, QuantizeObserver* observer = nullptr);

}  // namespace pocket
