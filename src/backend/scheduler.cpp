// The scheduler: assigns nodes to backends by layer, inserts copies where a tensor crosses
// backends, plans each backend's arena by liveness, and runs the splits in order.
#include "pocket/scheduler.hpp"

#include "graph/memory_planner.hpp"
#include "pocket/error.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <spdlog/spdlog.h>
#include <unordered_map>

namespace pocket {

namespace {

bool env_poison() {
    const char* v = std::getenv("POCKET_POISON");
    return v && *v && std::string_view(v) != "0";
}

// Byte offset of a view chain into its base tensor.
size_t offset_in_base(const Tensor* t) {
    size_t off = 0;
    for (; t->view_src; t = t->view_src) off += t->view_offs;
    return off;
}

// Operands an op writes into (its result aliases them): these must never be redirected to
// a copy, or the write would be lost.
bool writes_into(const Tensor& node, int slot) {
    switch (node.op) {
        case Op::cpy: return slot == 1;
        case Op::set_rows:
        case Op::rope_shift: return slot == 0;
        default: return false;
    }
}

constexpr uint8_t kPoisonByte = 0xff;  // 0xffffffff is a NaN in f32, 0xffff in f16

}  // namespace

struct Scheduler::State {
    std::vector<Backend*> backends;
    std::function<int(int)> backend_of_layer;
    bool poison = false;

    // One step of the timeline: a cross-backend copy or a node.
    struct Step {
        Tensor* node = nullptr;    // compute step
        Tensor* copy_src = nullptr;
        Tensor* copy_dst = nullptr;
        int backend = 0;
    };
    // A run of consecutive steps of one kind on one backend.
    struct Run {
        int backend;
        bool copies;
        size_t first, last;        // steps [first, last)
        std::vector<Tensor*> nodes;
    };
    struct Region {
        int backend;
        void* ptr;
        size_t size;
    };

    Graph* graph = nullptr;
    size_t graph_tensors = 0;
    std::vector<Step> steps;
    std::vector<Run> runs;
    std::vector<std::vector<Region>> poison_after;  // per step
    std::vector<std::unique_ptr<Buffer>> arenas;    // per backend
    std::vector<size_t> planned, unplanned;
    size_t n_copies = 0;
    size_t copies_run = 0;  // copy steps executed by every compute so far
    // Operands the scheduler redirected to copies of tensors from another backend.
    // They are applied only while the scheduler works on the graph (allocate, compute), so
    // the graph itself is left as its builder made it.
    struct Redirect {
        Tensor* node;
        int slot;
        Tensor* original;
        Tensor* replacement;
    };
    std::vector<Redirect> redirects;
    void redirect(bool on) {
        for (const Redirect& r : redirects) r.node->src[r.slot] = on ? r.replacement : r.original;
    }

    int clamp_backend(int b) const { return std::clamp(b, 0, static_cast<int>(backends.size()) - 1); }

    void allocate(Graph& g);
    void compute();
};

Scheduler::Scheduler(Backend& backend, const SchedulerOptions& options)
    : Scheduler(std::vector<Backend*>{&backend}, [](int) { return 0; }, options) {}

Scheduler::Scheduler(std::vector<Backend*> backends, std::function<int(int)> backend_of_layer,
                     const SchedulerOptions& options)
    : s_(std::make_unique<State>()) {
    if (backends.empty()) throw Error("scheduler: no backend");
    s_->backends = std::move(backends);
    s_->backend_of_layer = std::move(backend_of_layer);
    s_->poison = options.poison || env_poison();
    s_->arenas.resize(s_->backends.size());
    s_->planned.assign(s_->backends.size(), 0);
    s_->unplanned.assign(s_->backends.size(), 0);
}

Scheduler::~Scheduler() = default;

void Scheduler::allocate(Graph& g) {
    try {
        s_->allocate(g);
        s_->graph_tensors = g.n_tensors();
    } catch (...) {
        s_->redirect(false);
        s_->graph = nullptr;
        throw;
    }
}

void Scheduler::compute(Graph& g) {
    // A graph changed since allocate() (or another graph at the same address) would run on
    // a stale plan: refuse it.
    if (s_->graph != &g || s_->graph_tensors != g.n_tensors())
        throw Error("scheduler: compute() of a graph not allocate()d by this scheduler, or changed since");
    s_->compute();
}

size_t Scheduler::arena_bytes(size_t i) const { return i < s_->planned.size() ? s_->planned[i] : 0; }
size_t Scheduler::unplanned_bytes(size_t i) const { return i < s_->unplanned.size() ? s_->unplanned[i] : 0; }
size_t Scheduler::n_splits() const {
    return static_cast<size_t>(std::count_if(s_->runs.begin(), s_->runs.end(), [](const State::Run& r) { return !r.copies; }));
}
size_t Scheduler::n_copies() const { return s_->n_copies; }
size_t Scheduler::n_copies_run() const { return s_->copies_run; }

void Scheduler::State::allocate(Graph& g) {
    redirects.clear();
    graph = &g;
    steps.clear();
    runs.clear();
    n_copies = 0;

    const std::vector<Tensor*> nodes(g.nodes().begin(), g.nodes().end());
    // A snapshot: the copies added below grow the graph's own list.
    const std::vector<Tensor*> all(g.tensors().begin(), g.tensors().end());
    auto owned = [&](const Tensor* t) {
        return t->index >= 0 && static_cast<size_t>(t->index) < all.size() && all[t->index] == t;
    };
    // Tensors whose memory the arenas provide: graph inputs and computed results (not views).
    auto in_arena = [&](const Tensor* t) {
        return owned(t) && !t->view_src && (t->op != Op::none || (t->flags & kTensorInput));
    };

    // 1. A backend for each node: its layer's, or the last one when that cannot run it.
    std::unordered_map<const Tensor*, int> home;  // arena tensor -> backend holding it
    std::vector<int> node_backend(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        Tensor* n = nodes[i];
        int b = clamp_backend(backend_of_layer(n->layer));
        if (!op_is_view(n->op) && !backends[b]->supports_op(*n)) {
            b = static_cast<int>(backends.size()) - 1;
            if (!backends[b]->supports_op(*n))
                throw Error("scheduler: no backend supports {} on {}", op_name(n->op), tensor_desc(*n));
        }
        node_backend[i] = b;
        if (in_arena(n)) home[n] = b;
    }
    // Inputs live with their first reader.
    for (size_t i = 0; i < nodes.size(); ++i)
        for (Tensor* s : nodes[i]->src)
            if (s && in_arena(s->base()) && !home.count(s->base())) home[s->base()] = node_backend[i];
    for (Tensor* t : all)
        if ((t->flags & kTensorInput) && !home.count(t)) home[t] = 0;

    // 2. The timeline: runs of nodes per backend, each preceded by the copies its nodes need.
    std::map<std::pair<const Tensor*, int>, Tensor*> copy_of;    // (base, backend) -> copy
    std::map<std::pair<const Tensor*, int>, Tensor*> view_of;    // (view, backend) -> view of the copy
    std::vector<Tensor*> copies;
    for (size_t i = 0; i < nodes.size();) {
        const int b = node_backend[i];
        size_t j = i;
        while (j < nodes.size() && node_backend[j] == b) ++j;
        std::vector<Step> copy_steps;
        for (size_t k = i; k < j; ++k) {
            Tensor* n = nodes[k];
            if (op_is_view(n->op)) continue;
            for (int slot = 0; slot < kMaxSrc; ++slot) {
                Tensor* s = n->src[slot];
                if (!s) continue;
                Tensor* base = s->base();
                const bool foreign = in_arena(base) ? home.at(base) != b : !backends[b]->can_access(*base);
                if (!foreign) continue;
                if (writes_into(*n, slot))
                    throw Error("scheduler: {} on {} writes into {}, which that backend cannot reach: allocate it "
                                "in a buffer of the backend that runs layer {}",
                                op_name(n->op), backends[b]->name(), tensor_desc(*base), n->layer);
                if (!base->is_contiguous())
                    throw Error("scheduler: cannot copy non-contiguous {} to {}", tensor_desc(*base), backends[b]->name());
                Tensor*& copy = copy_of[{base, b}];
                if (!copy) {
                    copy = g.new_tensor(base->type, base->ne, Op::none, {});
                    copy->set_name(std::string(base->get_name()) + "#copy");
                    home[copy] = b;
                    copies.push_back(copy);
                    copy_steps.push_back(Step{nullptr, base, copy, b});
                }
                Tensor* replacement = copy;
                if (s != base) {
                    Tensor*& v = view_of[{s, b}];
                    if (!v) v = g.new_view(copy, Op::view, s->ne, s->nb, offset_in_base(s));
                    replacement = v;
                }
                redirects.push_back({n, slot, s, replacement});
                n->src[slot] = replacement;
            }
        }
        if (!copy_steps.empty()) {
            runs.push_back(Run{b, true, steps.size(), steps.size() + copy_steps.size(), {}});
            steps.insert(steps.end(), copy_steps.begin(), copy_steps.end());
        }
        Run run{b, false, steps.size(), steps.size() + (j - i), {}};
        for (size_t k = i; k < j; ++k) {
            steps.push_back(Step{nodes[k], nullptr, nullptr, b});
            run.nodes.push_back(nodes[k]);
        }
        runs.push_back(std::move(run));
        i = j;
    }
    n_copies = copies.size();

    // 3. Lifetimes in steps, then one plan per backend.
    std::unordered_map<const Tensor*, detail::PlanItem> items;
    auto touch = [&](const Tensor* t, int step) {
        const Tensor* base = t->base();
        if (auto it = items.find(base); it != items.end()) it->second.end = std::max(it->second.end, step);
    };
    // Inputs stay valid for the whole compute and between computes: a caller sets only
    // the inputs that changed.
    for (Tensor* t : all)
        if (in_arena(t) && (t->flags & kTensorInput)) items[t] = {t->nbytes(), -1, INT_MAX, 0};
    for (size_t i = 0; i < steps.size(); ++i) {
        const int step = static_cast<int>(i);
        const Step& st = steps[i];
        if (st.copy_dst) {
            touch(st.copy_src, step);
            items[st.copy_dst] = {st.copy_dst->nbytes(), step, step, 0};
            continue;
        }
        for (Tensor* s : st.node->src)
            if (s) touch(s, step);
        if (in_arena(st.node)) items[st.node] = {st.node->nbytes(), step, step, 0};
    }
    for (Tensor* t : all)
        if (t->flags & kTensorOutput)
            if (auto it = items.find(t->base()); it != items.end()) it->second.end = INT_MAX;

    poison_after.assign(steps.size(), {});
    for (size_t b = 0; b < backends.size(); ++b) {
        std::vector<const Tensor*> order;
        std::vector<detail::PlanItem> plan;
        // Deterministic order: creation order of the tensors.
        for (Tensor* t : g.tensors())
            if (auto it = items.find(t); it != items.end() && home.count(t) && home.at(t) == static_cast<int>(b)) {
                order.push_back(t);
                plan.push_back(it->second);
            }
        size_t total = 0;
        for (const auto& item : plan) total += item.size;
        unplanned[b] = total;
        planned[b] = detail::plan_memory(plan, Buffer::kAlign);
        if (!arenas[b] || arenas[b]->size() < planned[b]) {
            arenas[b].reset();
            arenas[b] = backends[b]->alloc_buffer(std::max<size_t>(planned[b], Buffer::kAlign));
        }
        for (size_t i = 0; i < order.size(); ++i) {
            auto* t = const_cast<Tensor*>(order[i]);
            t->data = static_cast<uint8_t*>(arenas[b]->data()) + plan[i].offset;
            t->buffer = arenas[b].get();
            if (poison && plan[i].end >= 0 && plan[i].end < static_cast<int>(steps.size()))
                poison_after[static_cast<size_t>(plan[i].end)].push_back({static_cast<int>(b), t->data, t->nbytes()});
        }
        if (poison) arenas[b]->clear(kPoisonByte);
    }

    // 4. Views take their memory from their source (creation order: sources come first).
    for (Tensor* t : g.tensors())
        if (t->view_src) {
            t->data = t->view_src->data ? static_cast<uint8_t*>(t->view_src->data) + t->view_offs : nullptr;
            t->buffer = t->view_src->buffer;
        }

    for (size_t b = 0; b < backends.size(); ++b)
        spdlog::debug("scheduler: {} arena {} bytes ({} without reuse)", backends[b]->name(), planned[b], unplanned[b]);
    spdlog::debug("scheduler: {} nodes, {} runs, {} copies", nodes.size(), runs.size(), n_copies);

    // 5. Scratch for each backend's nodes.
    for (size_t b = 0; b < backends.size(); ++b) {
        std::vector<Tensor*> mine;
        for (const Run& r : runs)
            if (!r.copies && r.backend == static_cast<int>(b)) mine.insert(mine.end(), r.nodes.begin(), r.nodes.end());
        backends[b]->reserve(mine);
    }
    redirect(false);
}

void Scheduler::State::compute() {
    redirect(true);
    struct Restore {
        State* s;
        ~Restore() { s->redirect(false); }
    } restore{this};
    auto release = [&](size_t step) {
        for (const Region& r : poison_after[step]) arenas[static_cast<size_t>(r.backend)]->fill(r.ptr, kPoisonByte, r.size);
    };
    for (const Run& run : runs) {
        Backend& b = *backends[static_cast<size_t>(run.backend)];
        if (run.copies) {
            for (size_t i = run.first; i < run.last; ++i) {
                const Step& st = steps[i];
                copy_tensor(*st.copy_src, *st.copy_dst);
                ++copies_run;
                if (poison) release(i);
            }
        } else if (!poison) {
            b.compute(run.nodes);
        } else {
            // Debug: one node at a time, poisoning what died at each step.
            for (size_t i = run.first; i < run.last; ++i) {
                b.compute(std::span<Tensor* const>(&steps[i].node, 1));
                release(i);
            }
        }
    }
}

}  // namespace pocket
