#pragma once
// A Context evaluates tokens with a Model: it owns one backend per device of the model's
// placement (the CPU's with -t threads), the KV cache (-c, -ctk, -ctv; each layer's on its
// device), the graph for the current batch shape, and the logits of the last decode.
//
//     auto model = pocket::Model::load("m.gguf");
//     pocket::Context ctx(*model, {.n_threads = 8});
//     ctx.decode(prompt_tokens);                 // evaluated in batches of n_ubatch
//     auto logits = ctx.last_logits();           // n_vocab floats
//
// Logits do not depend on n_threads or on the batch sizes: every kernel reduces in a fixed
// order and the batched matrix products give exactly the bits of the one-row ones.
//
// With n_seq > 1 (serve's -np) several sequences share the context, each in its own cells,
// and decode_sequences() evaluates tokens of any of them in one batch; a sequence's logits are
// still bitwise those of decoding it alone.
#include "pocket/model.hpp"
#include "pocket/vocab.hpp"

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pocket {

struct ContextOptions {
    uint32_t n_ctx = 0;        // 0: the model's context length, at most 4096
    uint32_t n_batch = 2048;   // -b: tokens handed to one decode call at most (logical batch)
    uint32_t n_ubatch = 512;   // -ub: tokens evaluated by one graph run (physical batch)
    int n_threads = 0;         // 0: all hardware threads
    int n_threads_batch = 0;   // -tb: threads for a batch of more than one token (0: as n_threads)
    GgmlType type_k = GgmlType::F16;
    GgmlType type_v = GgmlType::F16;
    // -fa: attention as one fused op (flash_attn); off: llama.cpp's non-fused path, scores
    // (mul_mat), soft_max, then the values (mul_mat), which needs a V cache of a float type.
    bool flash_attn = true;
    // Sequences sharing the context (serve's -np): each holds n_ctx / n_seq positions, in
    // cells of its own (a whole number of attention steps, so that it reduces as it would
    // alone at the start of the cache).
    uint32_t n_seq = 1;
};

// One token of a batch over several sequences (Context::decode_sequences).
struct SeqToken {
    TokenId token;
    uint32_t seq;         // < ContextOptions::n_seq
    bool logits = false;  // keep this token's logits
};

// The input of one matrix product with a model weight, as a graph run left it (imatrix).
struct MatmulInput {
    std::string_view weight;   // the weight's name, e.g. "blk.0.ffn_down.weight"
    const float* x;            // f32 [n_in, n_x, n_tokens], contiguous, the product's input as it
    int64_t n_in, n_x, n_tokens;  // is shaped: a plain product's [n_in, tokens] has n_x = tokens, n_tokens = 1
    // Experts (mul_mat_id): ids [n_used, n_tokens], the expert of each of a token's n_used
    // slots, slot i reading x row i % n_x. Null for a plain product.
    const int32_t* ids = nullptr;
    int64_t n_used = 0, n_expert = 0;
};
using MatmulObserver = std::function<void(const MatmulInput&)>;

class Context {
public:
    Context(const Model& model, const ContextOptions& options = {});
    ~Context();
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;

    // Appends tokens at positions n_past() .. and evaluates them. Keeps the logits of the
    // last token, or of every token when all_logits. Throws pocket::Error when the tokens do
    // not fit in the context (nothing is evaluated then).
    void decode(std::span<const TokenId> tokens, bool all_logits = false);

    // Evaluates n_seq independent sequences of equal length side by side, from an empty
    // cache, keeping every token's logits: sequence i is tokens[i*len, (i+1)*len), at
    // positions 0..len-1, and attends only to itself. This is how perplexity fills a batch
    // with several chunks (-b > -c). The logits are bitwise those of decoding each sequence
    // alone. Afterwards, clear() before the next decode().
    void decode_independent(std::span<const TokenId> tokens, uint32_t n_seq);

    // Appends each token to its sequence, at that sequence's next position, and evaluates them
    // all together (in ubatches of n_ubatch). A token attends to its own sequence's cells up to
    // itself, never to another's. logits(i) is then the i-th token marked `logits`, in batch
    // order. Throws pocket::Error, with nothing evaluated, when a sequence would outgrow its
    // n_ctx() positions or a token or sequence id is out of range.
    void decode_sequences(std::span<const SeqToken> batch);

    size_t n_logits() const { return n_logit_rows_; }
    std::span<const float> logits(size_t row) const;  // row < n_logits()
    std::span<const float> last_logits() const { return logits(n_logit_rows_ - 1); }

    uint32_t n_past(uint32_t seq = 0) const;  // tokens in sequence seq
    uint32_t n_ctx() const { return n_ctx_; } // positions one sequence can hold: -c, or -c / n_seq
    uint32_t n_seq() const { return static_cast<uint32_t>(past_.size()); }
    const Model& model() const { return model_; }

    void clear();                      // forgets every token of every sequence
    void truncate(uint32_t n_keep) { truncate(0, n_keep); }
    void truncate(uint32_t seq, uint32_t n_keep);  // forgets seq's tokens at positions >= n_keep
    // Context shift: drops n_discard tokens after the first n_keep, moves the rest down and
    // re-rotates their keys, so that generation can go on. One sequence only (n_seq 1).
    void shift(uint32_t n_keep, uint32_t n_discard);

    // After every graph run, hands the observer the input of each product with a model weight,
    // in graph order (imatrix collects its statistics so). Those inputs are kept to the end
    // of the run, which costs arena memory; an empty observer stops it.
    void observe_matmul_inputs(MatmulObserver observer);

    size_t arena_bytes() const;   // compute arenas, every device
    size_t kv_bytes() const;      // KV cache, every device

    // What each device of the placement holds, llama.cpp's buffer-size lines in one struct.
    struct DeviceMemoryUse {
        std::string device;
        size_t weights = 0, kv_cache = 0, compute = 0;
    };
    std::vector<DeviceMemoryUse> memory_use() const;
    // One line: "CPU: 0.9 MiB weights, 0.5 MiB KV cache, 1.1 MiB compute; TEST0: ...".
    std::string memory_summary() const;
    // Tensors copied between devices by every graph run so far (activations crossing a
    // device boundary; a weight is never among them once the model is loaded).
    size_t copies_run() const;

private:
    struct State;
    struct Batch;
    void check_token_ids(std::span<const TokenId> tokens) const;
    void check_fits(size_t n_tokens) const;
    void evaluate(const Batch& batch);                    // in ubatches
    void run_ubatch(const Batch& batch, size_t begin, size_t n, float* logits_out);
    void build_graph(int64_t n_tokens, int64_t n_out, int64_t n_kv);

    const Model& model_;
    ContextOptions options_;
    uint32_t n_ctx_ = 0;       // positions per sequence
    uint32_t seq_cells_ = 0;   // cells per sequence: sequence s owns [s * seq_cells_, (s + 1) * seq_cells_)
    std::vector<uint32_t> past_;  // tokens per sequence
    uint32_t seq_len_ = 0;  // while decode_independent's sequences fill the cache: their length
    std::unique_ptr<State> s_;
    std::vector<float> logits_;
    size_t n_logit_rows_ = 0;
};

}  // namespace pocket
