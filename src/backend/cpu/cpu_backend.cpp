// The CPU backend: host buffers, a persistent thread pool, and a table of op implementations.
// One pool run per compute: all threads walk the node list together, each doing its rows of
// a node, with a barrier between nodes.
#include "backend/cpu/convert.hpp"
#include "backend/cpu/cpu_device.hpp"
#include "backend/cpu/ops.hpp"
#include "backend/cpu/thread_pool.hpp"
#include "backend/cpu/thread_throttle.hpp"
#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <algorithm>
#include <cstring>

namespace pocket {

namespace {

using cpu::OpContext;

using OpFn = void (*)(const OpContext&, Tensor&);
using WorkFn = size_t (*)(const Tensor&, int);

struct OpEntry {
    OpFn run = nullptr;
    WorkFn work = nullptr;
};

constexpr size_t kOpCount = static_cast<size_t>(Op::flash_attn) + 1;

constexpr std::array<OpEntry, kOpCount> make_op_table() {
    std::array<OpEntry, kOpCount> t{};
    auto set = [&](Op op, OpFn run, WorkFn work = nullptr) { t[static_cast<size_t>(op)] = {run, work}; };
    set(Op::get_rows, cpu::op_get_rows);
    set(Op::add, cpu::op_add);
    set(Op::mul, cpu::op_mul);
    set(Op::scale, cpu::op_scale);
    set(Op::rms_norm, cpu::op_rms_norm);
    set(Op::norm, cpu::op_norm);
    set(Op::silu, cpu::op_silu);
    set(Op::gelu, cpu::op_gelu);
    set(Op::tanh, cpu::op_tanh);
    set(Op::swiglu, cpu::op_swiglu);
    set(Op::geglu, cpu::op_geglu);
    set(Op::soft_max, cpu::op_soft_max, cpu::soft_max_work_size);
    set(Op::mul_mat, cpu::op_mul_mat, cpu::mul_mat_work_size);
    set(Op::mul_mat_id, cpu::op_mul_mat_id, cpu::mul_mat_id_work_size);
    set(Op::top_k, cpu::op_top_k);
    set(Op::rope, cpu::op_rope, cpu::rope_work_size);
    set(Op::rope_shift, cpu::op_rope_shift, cpu::rope_work_size);
    set(Op::cont, cpu::op_cont, cpu::copy_work_size);
    set(Op::cpy, cpu::op_cpy, cpu::copy_work_size);
    set(Op::set_rows, cpu::op_set_rows, cpu::copy_work_size);
    set(Op::concat, cpu::op_concat);
    set(Op::flash_attn, cpu::op_flash_attn, cpu::flash_attn_work_size);
    return t;
}
constexpr auto kOps = make_op_table();

class CpuBackend final : public Backend {
public:
    explicit CpuBackend(const CpuBackendOptions& options)
        : pool_(options.n_threads), asked_threads_(pool_.size()), min_parallel_cost_(options.min_parallel_cost),
          adapt_threads_(options.adapt_threads) {}

    Device& device() const override { return cpu_device(); }
    bool can_access(const Tensor& t) const override {
        const Tensor* b = t.base();
        return !b->buffer || b->buffer->device().is_host();
    }

    bool supports_op(const Tensor& node) const override {
        if (op_is_view(node.op)) return true;
        // Weights in this device's own layout are read by the matrix product alone.
        for (int slot = 0; slot < kMaxSrc; ++slot)
            if (const Tensor* s = node.src[slot]; s && s->base()->buffer && !s->base()->buffer->plain_layout())
                if (node.op != Op::mul_mat || slot != 0 || !cpu::repacked(*s)) return false;
        const Tensor* a = node.src[0];
        switch (node.op) {
            case Op::get_rows: return cpu::to_f32_fn(a->type) && a->nb[0] == a->type_info().block_bytes;
            case Op::mul_mat:
            case Op::mul_mat_id: return cpu::mul_mat_supported(node);
            case Op::flash_attn: return cpu::to_f32_fn(node.src[1]->type) && cpu::to_f32_fn(node.src[2]->type);
            case Op::cpy: return cpu::to_f32_fn(a->type) && cpu::from_f32_fn(node.src[1]->type);
            case Op::set_rows: return cpu::from_f32_fn(a->type);
            case Op::rope_shift: return cpu::to_f32_fn(a->type) && cpu::from_f32_fn(a->type);
            default: return static_cast<size_t>(node.op) < kOps.size() && kOps[static_cast<size_t>(node.op)].run;
        }
    }

    void reserve(std::span<Tensor* const> nodes) override {
        const size_t need = work_size(nodes);
        if (need > work_size_) {
            work_.reset(static_cast<uint8_t*>(std::aligned_alloc(cpu::kScratchAlign, cpu::round_up(need, cpu::kScratchAlign))));
            if (!work_) throw Error("cpu backend: cannot allocate {} bytes of scratch", need);
            work_size_ = need;
        }
    }

    // Scratch is sized for the whole pool (reserve), so fewer threads always fit in it.
    void set_threads(int n_threads) override { asked_threads_ = std::clamp(n_threads, 1, pool_.size()); }

    void compute(std::span<Tensor* const> nodes) override {
        if (work_size(nodes) > work_size_)
            throw Error("cpu backend: compute without reserve for these nodes (scratch {} < {} bytes)", work_size_,
                        work_size(nodes));
        // Fewer threads than asked while other processes hold cores (see ThreadThrottle).
        using Clock = cpu::ThreadThrottle::Clock;
        pool_.set_active(adapt_threads_ ? throttle_.threads(asked_threads_, Clock::now()) : asked_threads_);
        // A graph with no op worth splitting (a tiny model's decode step) runs on this
        // thread alone: waking the workers would cost more than the whole graph.
        const bool split = pool_.active() > 1 && std::any_of(nodes.begin(), nodes.end(), [&](const Tensor* n) {
            return op_cost(*n) >= min_parallel_cost_;
        });
        if (split) {
            Run run{this, nodes};
            pool_.run(&CpuBackend::run_job, &run);
            if (adapt_threads_) {
                throttle_.observe(pool_.last_run(), Clock::now());
                const int given_up = throttle_.threads_given_up();
                if (given_up > logged_given_up_)
                    spdlog::debug("cpu: {} of {} threads given up: other processes hold cores (the threads kept waiting "
                                  "on a descheduled one)", given_up, asked_threads_);
                else if (given_up == 0 && logged_given_up_ > 0)
                    spdlog::debug("cpu: back to {} threads", asked_threads_);
                logged_given_up_ = given_up;
            }
        } else {
            const OpContext alone{0, 1, nullptr, work_.get(), work_size_, &errors_};
            for (Tensor* node : nodes)
                if (const OpFn fn = kOps[static_cast<size_t>(node->op)].run) fn(alone, *node);
        }
        if (!errors_.message.empty()) {
            std::string message = std::move(errors_.message);
            errors_.message.clear();
            throw Error("cpu backend: {}", message);
        }
    }

private:
    struct Run {
        CpuBackend* self;
        std::span<Tensor* const> nodes;
    };

    static void run_job(void* ctx, int ith) {
        auto* run = static_cast<Run*>(ctx);
        CpuBackend& b = *run->self;
        const OpContext all{ith, b.pool_.active(), &b.pool_, b.work_.get(), b.work_size_, &b.errors_};
        const OpContext alone{0, 1, nullptr, b.work_.get(), b.work_size_, &b.errors_};
        // Small ops run on thread 0 alone with no barrier after them: a barrier costs more
        // than their work (decode of a small model is mostly such ops). Thread 0 then runs
        // consecutive small ops in program order; a barrier is needed only before the next
        // op that all threads share. An element is computed the same way by any thread, so
        // this changes no result.
        bool pending = false;  // thread 0 wrote results the others have not synchronised with
        for (Tensor* node : run->nodes) {
            const OpFn fn = kOps[static_cast<size_t>(node->op)].run;
            if (!fn) continue;  // views: nothing to compute
            if (all.nth > 1 && op_cost(*node) < b.min_parallel_cost_) {
                if (ith == 0) fn(alone, *node);
                pending = true;
                continue;
            }
            if (pending) all.barrier();
            pending = false;
            fn(all, *node);
            all.barrier();
        }
    }

    // Rough count of multiply-adds, to tell ops worth splitting from ops that are not.
    static int64_t op_cost(const Tensor& node) {
        switch (node.op) {
            case Op::mul_mat:
            case Op::mul_mat_id: return node.src[0]->ne[0] * node.nelements();
            case Op::flash_attn: return node.src[0]->ne[0] * node.src[1]->ne[2] * node.src[0]->ne[1] * node.src[0]->ne[2];
            case Op::set_rows: return node.src[1]->nelements();
            case Op::cpy: return node.src[0]->nelements();
            default: return node.nelements();
        }
    }

    size_t work_size(std::span<Tensor* const> nodes) const {
        size_t need = 0;
        for (const Tensor* node : nodes)
            if (const WorkFn w = kOps[static_cast<size_t>(node->op)].work) need = std::max(need, w(*node, pool_.size()));
        return need;
    }

    struct FreeDeleter {
        void operator()(uint8_t* p) const { std::free(p); }
    };

    cpu::ThreadPool pool_;
    int asked_threads_;
    int64_t min_parallel_cost_;
    bool adapt_threads_;
    cpu::ThreadThrottle throttle_;
    int logged_given_up_ = 0;  // what run -v was last told
    std::unique_ptr<uint8_t, FreeDeleter> work_;
    size_t work_size_ = 0;
    cpu::ErrorSlot errors_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const CpuBackendOptions& options) {
    if (options.n_threads < 1) throw Error("cpu backend: n_threads must be >= 1, got {}", options.n_threads);
    return std::make_unique<CpuBackend>(options);
}

}  // namespace pocket
