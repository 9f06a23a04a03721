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
    // observe_matmul_inputs: the products seen in the current graph, and staging for them.
    MatmulObserver observer;
    struct Observed {
        const Tensor* weight;
        const Tensor* x;
        const Tensor* ids;  // mul_mat_id only
    };
    std::vector<Observed> observed;
    std::vector<float> x_host;
    std::vector<int32_t> ids_host;
};

Context::Context(const Model& model, const ContextOptions& options) : model_(model), options_(options), s_(std::make_unique<State>()) {
    const HParams& hp = model.hparams();
    const Placement& placement = model.placement();
    const uint32_t n_ctx_total = options.n_ctx ? options.n_ctx : std::min<uint32_t>(hp.n_ctx_train ? hp.n_ctx_train : 4096, 4096);
    if (options_.n_ubatch == 0 || options_.n_batch == 0) throw Error("batch sizes must be positive");
    if (options_.n_seq == 0) throw Error("a context holds at least one sequence");
    n_ctx_ = n_ctx_total / options_.n_seq;
    if (n_ctx_ == 0) throw Error("-c {} split among {} sequences leaves none a position", n_ctx_total, options_.n_seq);
    // One sequence owns the whole cache. Several each start at a multiple of the attention
    // step, so that every kernel walks a sequence's cells in the same lanes and blocks as it
    // would at cell 0 (the GPUs' attention blocks are aligned to cells, not to sequences): the
    // bits cannot depend on which sequence, or what else, is evaluated.
    seq_cells_ = options_.n_seq == 1 ? n_ctx_ : (n_ctx_ + kKvStep - 1) / kKvStep * kKvStep;
    past_.assign(options_.n_seq, 0);
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
    s_->cache = std::make_unique<KvCache>(placement, hp, seq_cells_ * options_.n_seq, options.type_k, options.type_v);
    s_->sched = std::make_unique<Scheduler>(s_->backend_list, [&placement](int layer) { return placement.device_index(layer); });
    // Plan the arenas for the largest batch now, as llama.cpp does, so that the memory
    // report is complete at load and a long prompt does not grow them later.
    const int64_t n_cells = s_->cache->n_ctx();
    const int64_t n_max = std::min<int64_t>(options_.n_ubatch, n_cells);
    build_graph(n_max, n_max, n_cells);
    spdlog::info("context: n_ctx {}{}, n_batch {}, n_ubatch {}, {} threads, KV cache {} + {}", n_ctx_total,
                 options_.n_seq > 1 ? fmt::format(" ({} sequences of {}, in {} cells)", options_.n_seq, n_ctx_, n_cells) : std::string(),
                 options_.n_batch,
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

// A batch laid out for evaluation: per token its id, position, cache cell, the first cell it
// may see (its sequence's first), and whether its logits are kept.
struct Context::Batch {
    std::vector<int32_t> ids, pos, cells, first;
    std::vector<uint8_t> keep;
    void add(TokenId id, int64_t p, int64_t cell, int64_t first_cell, bool logits) {
        ids.push_back(id);
        pos.push_back(static_cast<int32_t>(p));
        cells.push_back(static_cast<int32_t>(cell));
        first.push_back(static_cast<int32_t>(first_cell));
        keep.push_back(logits);
    }
    size_t size() const { return ids.size(); }
};

uint32_t Context::n_past(uint32_t seq) const {
    if (seq >= past_.size()) throw Error("no sequence {} (the context holds {})", seq, past_.size());
    return past_[seq];
}

void Context::check_token_ids(std::span<const TokenId> tokens) const {
    if (tokens.empty()) throw Error("decode: no tokens");
    const uint32_t n_vocab = model_.hparams().n_vocab;
    for (TokenId t : tokens)
        if (t < 0 || static_cast<uint32_t>(t) >= n_vocab) throw Error("token id {} is outside the vocabulary (0..{})", t, n_vocab - 1);
}

void Context::check_fits(size_t n_tokens) const {
    if (past_[0] + n_tokens > n_ctx_)
        throw Error("{} tokens do not fit in the context: {} of {} positions are used (raise -c)", n_tokens, past_[0], n_ctx_);
}

void Context::decode_independent(std::span<const TokenId> tokens, uint32_t n_seq) {
    if (n_seq == 0 || tokens.size() % n_seq != 0)
        throw Error("decode_independent: {} tokens do not split into {} equal sequences", tokens.size(), n_seq);
    if (past_.size() > 1) throw Error("decode_independent needs a context of one sequence");
    clear();
    check_token_ids(tokens);
    check_fits(tokens.size());
    // Sequence i lies in cells [i*len, (i+1)*len), at positions 0..len-1.
    const int64_t len = static_cast<int64_t>(tokens.size() / n_seq);
    Batch b;
    for (size_t t = 0; t < tokens.size(); ++t) {
        const int64_t cell = static_cast<int64_t>(t);
        b.add(tokens[t], cell % len, cell, cell - cell % len, true);
    }
    evaluate(b);
    seq_len_ = static_cast<uint32_t>(len);
    past_[0] = static_cast<uint32_t>(tokens.size());
}

void Context::decode(std::span<const TokenId> tokens, bool all_logits) {
    if (seq_len_) throw Error("decode: the cache holds independent sequences; clear() it first");
    check_token_ids(tokens);
    check_fits(tokens.size());
    Batch b;
    for (size_t t = 0; t < tokens.size(); ++t) {
        const int64_t p = past_[0] + static_cast<int64_t>(t);
        b.add(tokens[t], p, p, 0, all_logits || t + 1 == tokens.size());
    }
    evaluate(b);
    past_[0] += static_cast<uint32_t>(tokens.size());
}

void Context::decode_sequences(std::span<const SeqToken> batch) {
    if (seq_len_) throw Error("decode: the cache holds independent sequences; clear() it first");
    if (batch.empty()) throw Error("decode: no tokens");
    const uint32_t n_vocab = model_.hparams().n_vocab;
    std::vector<uint32_t> past = past_;
    Batch b;
    for (const SeqToken& t : batch) {
        if (t.seq >= past.size()) throw Error("decode: sequence {} does not exist (the context holds {})", t.seq, past.size());
        if (t.token < 0 || static_cast<uint32_t>(t.token) >= n_vocab)
            throw Error("token id {} is outside the vocabulary (0..{})", t.token, n_vocab - 1);
        if (past[t.seq] >= n_ctx_) throw Error("sequence {} is full: its {} positions are used", t.seq, n_ctx_);
        const int64_t first = static_cast<int64_t>(t.seq) * seq_cells_;
        b.add(t.token, past[t.seq], first + past[t.seq], first, t.logits);
        ++past[t.seq];
    }
    evaluate(b);
    past_ = std::move(past);
}

void Context::evaluate(const Batch& batch) {
    const size_t n_vocab = model_.hparams().n_vocab;
    n_logit_rows_ = 0;  // until every ubatch has run: a failed evaluation leaves no logits to read
    const size_t n_rows = static_cast<size_t>(std::count(batch.keep.begin(), batch.keep.end(), uint8_t{1}));
    logits_.resize(n_rows * n_vocab);
    size_t row = 0;
    for (size_t done = 0; done < batch.size();) {
        const size_t n = std::min<size_t>(options_.n_ubatch, batch.size() - done);
        run_ubatch(batch, done, n, logits_.data() + row * n_vocab);
        row += static_cast<size_t>(std::count(batch.keep.begin() + done, batch.keep.begin() + done + n, uint8_t{1}));
        done += n;
    }
    n_logit_rows_ = n_rows;
}

void Context::run_ubatch(const Batch& batch, size_t begin, size_t n, float* logits_out) {
    State& s = *s_;
    const HParams& hp = model_.hparams();
    const int64_t n_tokens = static_cast<int64_t>(n);
    // The rows whose logits are kept; with none, the graph still computes one (the last) and
    // it is not read.
    std::vector<int32_t> out;
    for (size_t t = 0; t < n; ++t)
        if (batch.keep[begin + t]) out.push_back(static_cast<int32_t>(t));
    const bool wanted = !out.empty();
    if (!wanted) out.push_back(static_cast<int32_t>(n - 1));
    const int64_t n_out = static_cast<int64_t>(out.size());
    const int64_t last_cell = *std::max_element(batch.cells.begin() + begin, batch.cells.begin() + begin + n);
    const int64_t n_cells = s.cache->n_ctx();
    const int64_t n_kv = std::min<int64_t>((last_cell + 1 + kKvStep - 1) / kKvStep * kKvStep, n_cells);

    if (!s.graph || s.n_tokens != n_tokens || s.n_out != n_out || s.n_kv != n_kv) build_graph(n_tokens, n_out, n_kv);

    tensor_set(*s.ids, batch.ids.data() + begin, n * sizeof(int32_t));
    tensor_set(*s.pos, batch.pos.data() + begin, n * sizeof(int32_t));
    tensor_set(*s.kv_rows, batch.cells.data() + begin, n * sizeof(int32_t));
    // Token t sees the cells of its sequence up to its own. A sliding window is a property of
    // the layers that have one (AttnParams::window), not of this mask.
    const float ninf = -std::numeric_limits<float>::infinity();
    s.mask.assign(static_cast<size_t>(n_kv * n_tokens), ninf);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const size_t i = begin + static_cast<size_t>(t);
        std::fill(s.mask.begin() + t * n_kv + batch.first[i], s.mask.begin() + t * n_kv + batch.cells[i] + 1, 0.0f);
    }
    tensor_set(*s.kq_mask, s.mask.data(), s.mask.size() * sizeof(float));
    if (s.out_rows) tensor_set(*s.out_rows, out.data(), out.size() * sizeof(int32_t));
    for (auto& b : s.backends) b->set_threads(n_tokens > 1 ? s.threads_batch : s.threads);
    s.sched->compute(*s.graph);
    if (wanted) tensor_get(*s.logits, logits_out, static_cast<size_t>(n_out) * hp.n_vocab * sizeof(float));
    for (const State::Observed& o : s.observed) {
        s.x_host.resize(static_cast<size_t>(o.x->nelements()));
        tensor_get(*o.x, s.x_host.data(), o.x->nbytes());
        MatmulInput in{o.weight->get_name(), s.x_host.data(), o.x->ne[0], o.x->ne[1], o.x->ne[2]};
        if (o.ids) {
            s.ids_host.resize(static_cast<size_t>(o.ids->nelements()));
            tensor_get(*o.ids, s.ids_host.data(), o.ids->nbytes());
            in.ids = s.ids_host.data();
            in.n_used = o.ids->ne[0];
            in.n_expert = o.weight->ne[2];
        }
        s.observer(in);
    }
}

void Context::observe_matmul_inputs(MatmulObserver observer) {
    s_->observer = std::move(observer);
    s_->graph.reset();  // the next run builds a graph that keeps (or no longer keeps) the inputs
    s_->observed.clear();
}

void Context::build_graph(int64_t n_tokens, int64_t n_out, int64_t n_kv) {
    State& s = *s_;
    // Forget the old shape first: if building or planning throws, the next run builds again
    // rather than running a graph that was never allocated.
    s.n_tokens = s.n_out = s.n_kv = -1;
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
    s.observed.clear();
    if (s.observer) {
        // Products whose weight is a model tensor (a named leaf; attention's products read
        // views of the cache). Their inputs become outputs, so that the planner keeps them.
        for (const Tensor* n : g.nodes())
            if ((n->op == Op::mul_mat || n->op == Op::mul_mat_id) && n->src[0]->op == Op::none && !n->src[0]->get_name().empty())
                s.observed.push_back({n->src[0], n->src[1], n->op == Op::mul_mat_id ? n->src[2] : nullptr});
        auto keep = [&g](const Tensor* t) {
            while (t->view_src) t = t->view_src;
            g.mark_output(const_cast<Tensor*>(t));
        };
        for (const State::Observed& o : s.observed) {
            if (o.x->type != GgmlType::F32 || !o.x->is_contiguous())
                throw Error("the input of {} is not contiguous f32: its statistics cannot be read", o.weight->get_name());
            keep(o.x);
            if (o.ids) keep(o.ids);
        }
    }
    s.sched->allocate(g);
    s.n_tokens = n_tokens;
    s.n_out = n_out;
    s.n_kv = n_kv;
    spdlog::debug("graph for {} tokens, {} outputs, {} cells: {} nodes, {} splits, {} copies", n_tokens, n_out, n_kv,
                  g.nodes().size(), s.sched->n_splits(), s.sched->n_copies());
}

void Context::clear() {
    std::fill(past_.begin(), past_.end(), 0u);
    seq_len_ = 0;
}

void Context::truncate(uint32_t seq, uint32_t n_keep) {
    if (seq_len_) throw Error("truncate: the cache holds independent sequences; clear() it first");
    if (seq >= past_.size()) throw Error("truncate: no sequence {} (the context holds {})", seq, past_.size());
    past_[seq] = std::min(past_[seq], n_keep);
}

void Context::shift(uint32_t n_keep, uint32_t n_discard) {
    if (seq_len_) throw Error("context shift: the cache holds independent sequences; clear() it first");
    if (past_.size() > 1) throw Error("context shift: the context holds {} sequences; it shifts only one", past_.size());
    uint32_t& n_past = past_[0];
    if (n_keep + n_discard > n_past) throw Error("context shift: cannot drop {} tokens after {} of {}", n_discard, n_keep, n_past);
    const uint32_t n_move = n_past - n_keep - n_discard;
    n_past -= n_discard;
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
