#pragma once
// A model loaded from GGUF: hyper-parameters, the placement of its layers on devices
// (-ngl), weights (in the mapping, or uploaded to their layer's device), the tokenizer, and
// the architecture that builds its forward graph. Immutable once loaded; one Model can
// serve several Contexts.
#include "pocket/gguf.hpp"
#include "pocket/placement.hpp"
#include "pocket/tensor.hpp"

#include <climits>
#include <functional>
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
    uint32_t sliding_window = 0; // <arch>.attention.sliding_window (0: none); the architecture says which layers use it

    uint32_t n_expert = 0;       // <arch>.expert_count (0: a dense feed-forward)
    uint32_t n_expert_used = 0;  // <arch>.expert_used_count: experts each token goes through

    uint32_t n_embd_k_gqa() const { return head_dim_k * n_head_kv; }
    uint32_t n_embd_v_gqa() const { return head_dim_v * n_head_kv; }
};

// The forward pass of one architecture (src/model/arch/<name>.cpp).
class Architecture {
public:
    virtual ~Architecture() = default;
    // Adds the forward pass for the batch in `in` to g and returns the logits [n_vocab, n_out].
    virtual Tensor* build(Graph& g, const ForwardInputs& in) const = 0;
    // Per-dimension rope frequency factors (llama3's rope_freqs) of a layer, needed to
    // re-rotate its cached keys in a context shift; null when the model has none.
    virtual Tensor* rope_freq_factors(uint32_t /*layer*/) const { return nullptr; }
    // The rope a layer's keys were rotated with, needed by the same shift: the model's
    // (HParams::rope) unless the architecture gives its layers their own (gemma3).
    virtual RopeParams layer_rope(uint32_t /*layer*/, const RopeParams& model_rope) const { return model_rope; }
};

struct ModelLoadOptions {
    bool use_mmap = true;
    bool mlock = false;
    bool repack = true;  // --no-repack: every weight keeps the file's layout
    GpuLayers gpu_layers{};   // -ngl: default auto (all that fit on the first GPU; none without one)
    std::string device{};     // -dev: the GPU to use; empty: the first
    uint32_t n_ctx = 0;       // -c, for -ngl auto's estimate of the KV cache (0: as Context's default)
    uint32_t n_ubatch = 512;  // -ub, for -ngl auto's estimate of the compute arena
    std::vector<std::string> kv_overrides{};  // --override-kv KEY=TYPE:VALUE, applied before anything is read
    int n_threads = 0;        // threads preparing the weights' layouts (0: all hardware threads)
    // Called as weights reach a device: (device name, bytes done, bytes in all).
    std::function<void(std::string_view device, size_t done, size_t total)> progress{};
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
    // Bytes of weights one decoded token reads, wherever they live: every matrix and vector
    // the forward pass uses once, one row of an embedding table, and of an expert stack the
    // n_expert_used of n_expert slices a token goes through. bench --bandwidth divides by it.
    uint64_t bytes_read_per_token() const;
    std::string type_name() const;  // e.g. "Q4_K - Medium" from general.file_type, or the dominant type

    // Where each layer lives (-ngl, -dev), decided at load.
    const Placement& placement() const { return placement_; }
    // Bytes of weights held by placement().devices[i].
    size_t weight_bytes_on(size_t device_index) const;

    // Weights by GGUF name, checked against the expected shape (ne[0] first; trailing 1s may
    // be omitted); throws when missing or misshapen. Architectures call these while the
    // model loads, and the loader then hands each weight to the device of the layer that
    // uses it: `layer` is that layer (default: from the name: blk.N.* -> N, output* -> the
    // output, others -> the input side, the host). A weight used by two layers on different
    // devices (a tied output matrix, rope_freqs) gets one tensor per device.
    static constexpr int kLayerFromName = INT_MIN;
    Tensor* weight(const std::string& name, std::initializer_list<int64_t> shape, int layer = kLayerFromName) const;
    Tensor* optional_weight(const std::string& name, std::initializer_list<int64_t> shape, int layer = kLayerFromName) const;

private:
    explicit Model(GgufFile file);
    void load_weights();  // hands every requested weight to its device
    GgufFile file_;
    HParams hparams_;
    std::unique_ptr<Tokenizer> tokenizer_;
    std::unique_ptr<Architecture> arch_;
    ModelLoadOptions options_;
    Placement placement_;
    struct WeightKey {
        std::string name;
        int device;
        bool input;  // read by the embedding lookup (get_rows): stays in the file's layout
        auto operator<=>(const WeightKey&) const = default;
    };
    mutable std::map<WeightKey, Tensor> weights_;
    std::vector<std::unique_ptr<Buffer>> weight_buffers_;  // what the devices made of the weights
    std::vector<size_t> weight_bytes_;                     // per device
    bool loaded_ = false;                                  // weights handed to their devices
};

}  // namespace pocket
