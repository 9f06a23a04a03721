#include "pocket/context.hpp"

#include "model/forward_inputs.hpp"
#include "model/kv_cache.hpp"
#include "pocket/backend.hpp"
#include "pocket/error.hpp"
#include "pocket/graph.hpp"
#include "pocket/scheduler.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace pocket {
namespace {

// Attention reads the cache in steps of this many cells, so that the decode graph is
// rebuilt once per 256 tokens rather than per token; the cells past n_past are masked.
constexpr uint32_t kKvStep = 256;

}  // namespace

struct Context::State {
    std::vector<std::unique_ptr<Backend>> backends;  // per placement device, the CPU last
    std::vector<Backend*> backend_list;
    std::unique_ptr<KvCache> cache;
    std::unique_ptr<Scheduler> sched;
    // The graph of the current batch shape; rebuilt when the shape changes.
    std::unique_ptr<Graph> graph;
    int64_t n_tokens = -1, n_out = -1, n_kv = -1;
    Tensor *ids = nullptr, *pos = nullptr, *kv_rows = nullptr, *kq_mask = nullptr, *out_rows = nullptr, *logits = nullptr;
    std::vector<int32_t> i32;  // staging for inputs
    int threads = 1, threads_batch = 1;  // -t for one token, -tb for a batch
    std::vector<float> mask;
};

Context::Context(const Model& model, const ContextOptions& options) : model_(model), options_(options), s_(std::make_unique<State>()) {
    const HParams& hp = model.hparams();
    const Placement& placement = model.placement();
    n_ctx_ = options.n_ctx ? options.n_ctx : std::min<uint32_t>(hp.n_ctx_train ? hp.n_ctx_train : 4096, 4096);
    if (options_.n_ubatch == 0 || options_.n_batch == 0) throw Error("batch sizes must be positive");
    // Without fused attention V is transposed for its product, which a block type cannot be
    // (llama.cpp: "V cache quantization requires flash_attn").
    if (!options_.flash_attn && ggml_type_info(options_.type_v).block_size != 1)
        throw Error("-ctv {} needs -fa on: without flash attention the V cache must be f32, f16 or bf16",
                    ggml_type_info(options_.type_v).name);
    options_.n_ubatch = std::min(options_.n_ubatch, options_.n_batch);
    int threads = options.n_threads;
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    s_->threads = threads;
    s_->threads_batch = options.n_threads_batch > 0 ? options.n_threads_batch : threads;
    // One pool per backend, as large as the larger count; each compute uses its own count.
    for (Device* d : placement.devices) {
        s_->backends.push_back(d->make_backend(std::max(threads, s_->threads_batch)));
        s_->backend_list.push_back(s_->backends.back().get());
    }
    s_->cache = std::make_unique<KvCache>(placement, hp, n_ctx_, options.type_k, options.type_v);
    s_->sched = std::make_unique<Scheduler>(s_->backend_list, [&placement](int layer) { return placement.device_index(layer); });
    // Plan the arenas for the largest batch now, as llama.cpp does, so that the memory
    // report is complete at load and a long prompt does not grow them later.
    const int64_t n_max = std::min<int64_t>(options_.n_ubatch, n_ctx_);
    build_graph(n_max, n_max, n_ctx_);
    spdlog::info("context: n_ctx {}, n_batch {}, n_ubatch {}, {} threads, KV cache {} + {}", n_ctx_, options_.n_batch,
                 options_.n_ubatch, threads, ggml_type_info(options.type_k).name, ggml_type_info(options.type_v).name);
    for (const DeviceMemoryUse& u : memory_use())
        spdlog::info("{}: weights {:.2f} MiB, KV cache {:.2f} MiB, compute {:.2f} MiB", u.device, u.weights / 1048576.0,
                     u.kv_cache / 1048576.0, u.compute / 1048576.0);
}

std::vector<Context::DeviceMemoryUse> Context::memory_use() const {
    std::vector<DeviceMemoryUse> out;
    const Placement& placement = model_.placement();
    for (size_t d = 0; d < placement.devices.size(); ++d)
        out.push_back({std::string(placement.devices[d]->name()), model_.weight_bytes_on(d), s_->cache->bytes_on(d),
                       s_->sched->arena_bytes(d)});
    return out;
}

std::string Context::memory_summary() const {
    std::string line;
    for (const DeviceMemoryUse& u : memory_use())
        line += fmt::format("{}{}: {:.1f} MiB weights, {:.1f} MiB KV cache, {:.1f} MiB compute", line.empty() ? "" : "; ", u.device,
                            u.weights / 1048576.0, u.kv_cache / 1048576.0, u.compute / 1048576.0);
    return line;
}

size_t Context::copies_run() const { return s_->sched->n_copies_run(); }

Context::~Context() = default;

std::span<const float> Context::logits(size_t row) const {
    if (row >= n_logit_rows_) throw Error("no logits for row {} (the last decode kept {})", row, n_logit_rows_);
    const size_t n = model_.hparams().n_vocab;
    return {logits_.data() + row * n, n};
}

void Context::check_tokens(std::span<const TokenId> tokens) const {
    if (tokens.empty()) throw Error("decode: no tokens");
    if (n_past_ + tokens.size() > n_ctx_)
        throw Error("{} tokens do not fit in the context: {} of {} positions are used (raise -c)", tokens.size(), n_past_, n_ctx_);
    const uint32_t n_vocab = model_.hparams().n_vocab;
    for (TokenId t : tokens)
        if (t < 0 || static_cast<uint32_t>(t) >= n_vocab) throw Error("token id {} is outside the vocabulary (0..{})", t, n_vocab - 1);
}

void Context::decode_independent(std::span<const TokenId> tokens, uint32_t n_seq) {
    if (n_seq == 0 || tokens.size() % n_seq != 0)
        throw Error("decode_independent: {} tokens do not split into {} equal sequences", tokens.size(), n_seq);
    clear();
    check_tokens(tokens);
    seq_len_ = static_cast<uint32_t>(tokens.size() / n_seq);
    decode_batches(tokens, /*all_logits=*/true);
}

void Context::decode(std::span<const TokenId> tokens, bool all_logits) {
    if (seq_len_) throw Error("decode: the cache holds independent sequences; clear() it first");
    check_tokens(tokens);
    decode_batches(tokens, all_logits);
}

void Context::decode_batches(std::span<const TokenId> tokens, bool all_logits) {
    const uint32_t n_vocab = model_.hparams().n_vocab;
    n_logit_rows_ = all_logits ? tokens.size() : 1;
    logits_.resize(n_logit_rows_ * n_vocab);
    for (size_t done = 0; done < tokens.size();) {
        const size_t n = std::min<size_t>(options_.n_ubatch, tokens.size() - done);
        const bool last = done + n == tokens.size();
        if (all_logits || last) run_ubatch(tokens.subspan(done, n), all_logits, all_logits ? done : 0);
        else run_ubatch(tokens.subspan(done, n), false, SIZE_MAX);  // no logits wanted from this one
        done += n;
    }
}

void Context::run_ubatch(std::span<const TokenId> tokens, bool all_logits, size_t out_offset) {
    State& s = *s_;
    const HParams& hp = model_.hparams();
    const int64_t n_tokens = static_cast<int64_t>(tokens.size());
    const int64_t n_out = all_logits ? n_tokens : 1;
    const int64_t n_kv = std::min<int64_t>((n_past_ + n_tokens + kKvStep - 1) / kKvStep * kKvStep, n_ctx_);

    if (!s.graph || s.n_tokens != n_tokens || s.n_out != n_out || s.n_kv != n_kv) build_graph(n_tokens, n_out, n_kv);

    s.i32.assign(tokens.begin(), tokens.end());
    tensor_set(*s.ids, s.i32.data(), s.i32.size() * sizeof(int32_t));
    // Token t goes to cell n_past + t. Its position counts from the start of its sequence:
    // the one sequence, or one of decode_independent's sequences of seq_len_ tokens.
    auto seq_start = [&](int64_t cell) { return seq_len_ ? cell - cell % seq_len_ : 0; };
    for (int64_t t = 0; t < n_tokens; ++t) {
        const int64_t cell = n_past_ + t;
        s.i32[static_cast<size_t>(t)] = static_cast<int32_t>(cell - seq_start(cell));
    }
    tensor_set(*s.pos, s.i32.data(), s.i32.size() * sizeof(int32_t));
    for (int64_t t = 0; t < n_tokens; ++t) s.i32[static_cast<size_t>(t)] = static_cast<int32_t>(n_past_ + t);
    tensor_set(*s.kv_rows, s.i32.data(), s.i32.size() * sizeof(int32_t));
    // Token t sees the cells of its sequence up to its own. A sliding window is a property of
    // the layers that have one (AttnParams::window), not of this mask.
    const float ninf = -std::numeric_limits<float>::infinity();
    s.mask.assign(static_cast<size_t>(n_kv * n_tokens), ninf);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const int64_t cell = n_past_ + t;
        const int64_t first = seq_start(cell);
        std::fill(s.mask.begin() + t * n_kv + first, s.mask.begin() + t * n_kv + cell + 1, 0.0f);
    }
    tensor_set(*s.kq_mask, s.mask.data(), s.mask.size() * sizeof(float));
    if (s.out_rows) {
        const int32_t last = static_cast<int32_t>(n_tokens - 1);
        tensor_set(*s.out_rows, &last, sizeof last);
    }
    for (auto& b : s.backends) b->set_threads(n_tokens > 1 ? s.threads_batch : s.threads);
    s.sched->compute(*s.graph);
    n_past_ += static_cast<uint32_t>(n_tokens);
    if (out_offset != SIZE_MAX) {
        const size_t n_vocab = hp.n_vocab;
        tensor_get(*s.logits, logits_.data() + out_offset * n_vocab, static_cast<size_t>(n_out) * n_vocab * sizeof(float));
    }
}

void Context::build_graph(int64_t n_tokens, int64_t n_out, int64_t n_kv) {
    State& s = *s_;
    s.graph = std::make_unique<Graph>();
    Graph& g = *s.graph;
    s.ids = g.input("ids", GgmlType::I32, {n_tokens, 1, 1, 1});
    s.pos = g.input("pos", GgmlType::I32, {n_tokens, 1, 1, 1});
    s.kv_rows = g.input("kv_rows", GgmlType::I32, {n_tokens, 1, 1, 1});
    s.kq_mask = g.input("kq_mask", GgmlType::F32, {n_kv, n_tokens, 1, 1});
    s.out_rows = n_out < n_tokens ? g.input("out_rows", GgmlType::I32, {n_out, 1, 1, 1}) : nullptr;
    ForwardInputs in{model_.hparams(), *s.cache, n_tokens, n_out, n_kv, s.ids, s.pos, s.kv_rows, s.kq_mask, s.out_rows,
                     options_.flash_attn};
    s.logits = model_.architecture().build(g, in);
    g.mark_output(s.logits);
    s.sched->allocate(g);
    s.n_tokens = n_tokens;
    s.n_out = n_out;
    s.n_kv = n_kv;
    spdlog::debug("graph for {} tokens, {} outputs, {} cells: {} nodes, {} splits, {} copies", n_tokens, n_out, n_kv,
                  g.nodes().size(), s.sched->n_splits(), s.sched->n_copies());
}

void Context::clear() {
    n_past_ = 0;
    seq_len_ = 0;
}

void Context::truncate(uint32_t n_keep) {
    if (seq_len_) throw Error("truncate: the cache holds independent sequences; clear() it first");
    n_past_ = std::min(n_past_, n_keep);
}

void Context::shift(uint32_t n_keep, uint32_t n_discard) {
    if (seq_len_) throw Error("context shift: the cache holds independent sequences; clear() it first");
    if (n_keep + n_discard > n_past_) throw Error("context shift: cannot drop {} tokens after {} of {}", n_discard, n_keep, n_past_);
    const uint32_t n_move = n_past_ - n_keep - n_discard;
    n_past_ -= n_discard;
    s_->graph.reset();  // the next decode rebuilds its graph
    if (n_move == 0 || n_discard == 0) return;
    // One graph, run where each layer lives: move cells [n_keep + n_discard, n_past) down to
    // n_keep, then re-rotate the moved keys by -n_discard positions. The move copies chunks of
    // n_discard cells in order, so no chunk overwrites cells not yet copied.
    const HParams& hp = model_.hparams();
    Graph g;
    Tensor* delta = g.input("delta", GgmlType::I32, {n_move, 1, 1, 1});
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        g.set_layer(static_cast<int>(l));
        for (Tensor* cache : {&s_->cache->k(l), &s_->cache->v(l)})
            for (uint32_t done = 0; done < n_move; done += n_discard) {
                const uint32_t n = std::min(n_discard, n_move - done);
                const size_t row = cache->nb[1];
                Tensor* from = g.view_2d(cache, cache->ne[0], n, row, (n_keep + n_discard + done) * row);
                Tensor* to = g.view_2d(cache, cache->ne[0], n, row, (n_keep + done) * row);
                g.cpy(from, to);
            }
        Tensor& k = s_->cache->k(l);
        const size_t head = ggml_row_bytes(k.type, hp.head_dim_k).value();
        Tensor* cells = g.view_3d(&k, hp.head_dim_k, hp.n_head_kv, n_move, head, k.nb[1], n_keep * k.nb[1]);
        g.mark_output(g.rope_shift(cells, delta, model_.architecture().layer_rope(l, hp.rope), model_.architecture().rope_freq_factors(l)));
    }
    const Placement& placement = model_.placement();
    Scheduler sched(s_->backend_list, [&placement](int layer) { return placement.device_index(layer); });
    sched.allocate(g);
    std::vector<int32_t> d(n_move, -static_cast<int32_t>(n_discard));
    tensor_set(*delta, d.data(), d.size() * sizeof(int32_t));
    sched.compute(g);
}

size_t Context::arena_bytes() const {
    size_t n = 0;
    for (size_t d = 0; d < s_->backends.size(); ++d) n += s_->sched->arena_bytes(d);
    return n;
}
size_t Context::kv_bytes() const { return s_->cache->bytes(); }

}  // namespace pocket
