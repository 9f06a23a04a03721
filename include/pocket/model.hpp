#pragma once
// A model loaded from GGUF: hyper-parameters, weights (pointing into the mapping), the
// tokenizer, and the architecture that builds its forward graph. Immutable once loaded;
// one Model can serve several Contexts.
#include "pocket/gguf.hpp"
#include "pocket/tensor.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace pocket {

class Tokenizer;
class Graph;
struct ForwardInputs;

// Hyper-parameters, from `<arch>.*` keys. Names follow llama.cpp's.
struct HParams {
    std::string arch;            // general.architecture
    uint32_t n_vocab = 0;
    uint32_t n_ctx_train = 0;    // <arch>.context_length
    uint32_t n_embd = 0;         // <arch>.embedding_length
    uint32_t n_layer = 0;        // <arch>.block_count
    uint32_t n_ff = 0;           // <arch>.feed_forward_length
    uint32_t n_head = 0;         // <arch>.attention.head_count
    uint32_t n_head_kv = 0;      // <arch>.attention.head_count_kv (default: n_head)
    uint32_t head_dim_k = 0;     // <arch>.attention.key_length (default: n_embd / n_head)
    uint32_t head_dim_v = 0;     // <arch>.attention.value_length (default: head_dim_k)
    uint32_t n_rot = 0;          // <arch>.rope.dimension_count (default: head_dim_k)
    float norm_eps = 1e-5f;      // <arch>.attention.layer_norm_rms_epsilon
    RopeParams rope;             // mode from the architecture; base, scale, YaRN from <arch>.rope.*
    uint32_t sliding_window = 0; // <arch>.attention.sliding_window (0: none)

    uint32_t n_embd_k_gqa() const { return head_dim_k * n_head_kv; }
    uint32_t n_embd_v_gqa() const { return head_dim_v * n_head_kv; }
};

// The forward pass of one architecture (src/model/arch/<name>.cpp).
class Architecture {
public:
    virtual ~Architecture() = default;
    // Adds the forward pass for the batch in `in` to g and returns the logits [n_vocab, n_out].
    virtual Tensor* build(Graph& g, const ForwardInputs& in) const = 0;
    // Per-dimension rope frequency factors (llama3's rope_freqs), needed to re-rotate cached
    // keys in a context shift; null when the model has none.
    virtual Tensor* rope_freq_factors() const { return nullptr; }
};

struct ModelLoadOptions {
    bool use_mmap = true;
    bool mlock = false;
    bool repack = true;  // --no-repack: keep the CPU matrix products on the file's layout
};

class Model {
public:
    // Loads and checks everything: a missing key, a missing tensor or a wrong shape throws
    // pocket::Error naming the file and the key or tensor.
    static std::unique_ptr<Model> load(const std::string& path, const ModelLoadOptions& options = {});
    ~Model();

    const GgufFile& file() const { return file_; }
    const HParams& hparams() const { return hparams_; }
    const Tokenizer& tokenizer() const { return *tokenizer_; }
    const Architecture& architecture() const { return *arch_; }
    uint64_t n_params() const;
    uint64_t weight_bytes() const;
    std::string type_name() const;  // e.g. "Q4_K - Medium" from general.file_type, or the dominant type

    // Weights by GGUF name, created on first request and checked against the expected shape
    // (ne[0] first; trailing 1s may be omitted). Throws when missing or misshapen.
    Tensor* weight(const std::string& name, std::initializer_list<int64_t> shape) const;
    Tensor* optional_weight(const std::string& name, std::initializer_list<int64_t> shape) const;

    // Gives a weight that a CPU matrix product reads a row-interleaved copy (Tensor::packed),
    // when its type has one that is faster on this CPU. The file's bytes stay as they are
    // (GPU backends and get_rows read them). Once per weight; results are bitwise the same.
    void pack_for_cpu(Tensor& weight) const;

private:
    explicit Model(GgufFile file);
    GgufFile file_;
    HParams hparams_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<Architecture> arch_;
    ModelLoadOptions options_;
    mutable std::map<std::string, Tensor, std::less<>> weights_;
    struct FreeDeleter {
        void operator()(void* p) const;
    };
    mutable std::vector<std::unique_ptr<void, FreeDeleter>> packed_;  // the Tensor::packed copies
};

}  // namespace pocket
