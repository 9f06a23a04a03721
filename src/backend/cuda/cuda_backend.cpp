// The CUDA backend: each run of nodes the scheduler hands it is launched on the backend's
// stream. The first time a run comes (or whenever its memory or parameters changed) the
// kernels are launched one by one; when the same run comes back unchanged, it is captured
// once into a CUDA graph and from then on replayed with one launch (a decode step's few
// hundred kernels cost one call). POCKET_CUDA_GRAPHS=0 launches one by one always;
// POCKET_CUDA_PROFILE=1 does too, timing each kernel with events, and prints the time per
// op (and weight type, and batch shape) to stderr when the backend goes; POCKET_CUDA_STATS=1
// prints how many runs were replayed, captured and launched directly.
#include "backend/cuda/cuda_device.hpp"
#include "backend/cuda/cuda_ops.hpp"
#include "pocket/error.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pocket::cuda {

namespace {

// An environment switch: unset or empty gives `fallback`, "0" off, anything else on.
bool env_switch(const char* name, bool fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::string_view(v) != "0" : fallback;
}

bool graphs_enabled() {
    static const bool on = env_switch("POCKET_CUDA_GRAPHS", true);
    return on;
}

bool stats_wanted() {
    static const bool on = env_switch("POCKET_CUDA_STATS", false);
    return on;
}

bool profiling() {
    static const bool on = env_switch("POCKET_CUDA_PROFILE", false);
    return on;
}

// What a profile line groups by: the op, its weight type for products, one column or many.
std::string profile_key(const Tensor& n) {
    std::string k(op_name(n.op));
    if (n.op == Op::mul_mat || n.op == Op::mul_mat_id || n.op == Op::get_rows) k += " " + std::string(n.src[0]->type_info().name);
    if (n.op == Op::flash_attn) k += " " + std::string(n.src[1]->type_info().name) + (n.src[0]->ne[1] == 1 ? " x1" : " xN");
    if (n.op == Op::mul_mat) k += n.src[1]->ne[1] == 1 ? " x1" : " xN";
    return k;
}

void launch(const Tensor& node, const Launch& l) {
    switch (node.op) {
        case Op::get_rows: get_rows(node, l); break;
        case Op::add:
        case Op::mul:
        case Op::swiglu:
        case Op::geglu: binary(node, l); break;
        case Op::scale:
        case Op::silu:
        case Op::gelu:
        case Op::tanh: unary(node, l); break;
        case Op::rms_norm:
        case Op::norm: norm(node, l); break;
        case Op::soft_max: soft_max(node, l); break;
        case Op::mul_mat: mul_mat(node, l); break;
        case Op::mul_mat_id: mul_mat_id(node, l); break;
        case Op::top_k: top_k(node, l); break;
        case Op::rope:
        case Op::rope_shift: rope(node, l); break;
        case Op::cont:
        case Op::cpy: copy(node, l); break;
        case Op::set_rows: set_rows(node, l); break;
        case Op::concat: concat(node, l); break;
        case Op::flash_attn: flash_attn(node, l); break;
        default: throw Error("CUDA: no kernel for {}", op_name(node.op));
    }
}

class CudaBackend final : public Backend {
public:
    explicit CudaBackend(CudaDevice& device) : device_(device) {
        device_.use();
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamDefault), device_.name(), "cudaStreamCreate");
        launch_.stream = stream_;
    }
    ~CudaBackend() override {
        device_.use_quietly();
        cudaStreamSynchronize(stream_);
        if (!profile_.empty()) print_profile();
        if (stats_wanted())
            std::fprintf(stderr, "%s: %zu runs: %zu replayed as graphs, %zu captured, %zu launched directly\n",
                         std::string(device_.name()).c_str(), n_replayed_ + n_captured_ + n_direct_, n_replayed_, n_captured_, n_direct_);
        for (auto& [a, b] : events_) {
            cudaEventDestroy(a);
            cudaEventDestroy(b);
        }
        clear_runs();
        cudaStreamDestroy(stream_);
    }

    Device& device() const override { return device_; }

    bool can_access(const Tensor& t) const override {
        const Buffer* b = t.base()->buffer;
        return b && &b->device() == &device_;
    }

    bool supports_op(const Tensor& node) const override { return supports(node); }

    void reserve(std::span<Tensor* const>) override {
        device_.use();
        cudaStreamSynchronize(stream_);
        clear_runs();
    }

    void compute(std::span<Tensor* const> nodes) override {
        device_.use();
        for (const Tensor* n : nodes)
            if (!op_is_view(n->op) && !can_access(*n))
                throw Error("{}: {} is not in its memory (a missing copy)", device_.name(), tensor_desc(*n));
        signature(nodes, sig_);
        Run& run = runs_[Key{nodes.data(), nodes.size()}];
        if (run.signature != sig_) {
            // New or changed: launch directly; capture only if it comes back the same.
            if (run.exec) cudaGraphExecDestroy(run.exec);
            run.exec = nullptr;
            run.no_graph = false;
            run.signature = sig_;
            launch_all(nodes);
            ++n_direct_;
        } else if (run.exec) {
            check(cudaGraphLaunch(run.exec, stream_), device_.name(), "cudaGraphLaunch");
            ++n_replayed_;
        } else if (graphs_enabled() && !profiling() && !run.no_graph && capture(nodes, run)) {
            check(cudaGraphLaunch(run.exec, stream_), device_.name(), "cudaGraphLaunch");
            ++n_captured_;
        } else {
            launch_all(nodes);
            ++n_direct_;
        }
        check(cudaGetLastError(), device_.name(), "a kernel launch");
    }

private:
    using Key = std::pair<Tensor* const*, size_t>;
    struct Run {
        std::vector<uint64_t> signature;
        cudaGraphExec_t exec = nullptr;
        bool no_graph = false;   // the driver refused to capture it: launch directly
    };

    // What a launch sequence depends on: the nodes, their shapes, strides, memory and parameters.
    static void signature(std::span<Tensor* const> nodes, std::vector<uint64_t>& s) {
        s.clear();
        for (const Tensor* n : nodes) {
            s.push_back(reinterpret_cast<uintptr_t>(n));
            s.push_back(static_cast<uint64_t>(n->op));
            s.push_back(reinterpret_cast<uintptr_t>(n->data));
            for (const Tensor* t : std::array<const Tensor*, 1 + kMaxSrc>{n, n->src[0], n->src[1], n->src[2], n->src[3], n->src[4]}) {
                if (!t) continue;
                s.push_back(reinterpret_cast<uintptr_t>(t->data));
                s.push_back(static_cast<uint64_t>(t->type));
                for (int d = 0; d < kMaxDims; ++d) {
                    s.push_back(static_cast<uint64_t>(t->ne[d]));
                    s.push_back(t->nb[d]);
                }
            }
            uint64_t words[8];
            std::memcpy(words, n->op_params.data(), sizeof words);
            s.insert(s.end(), words, words + 8);
        }
    }

    void launch_all(std::span<Tensor* const> nodes) {
        if (profiling()) return launch_timed(nodes);
        for (const Tensor* n : nodes)
            if (!op_is_view(n->op)) launch(*n, launch_);
    }

    void launch_timed(std::span<Tensor* const> nodes) {
        size_t used = 0;
        std::vector<const Tensor*> timed;
        for (const Tensor* n : nodes) {
            if (op_is_view(n->op)) continue;
            if (used == events_.size()) {
                std::pair<cudaEvent_t, cudaEvent_t> e;
                check(cudaEventCreate(&e.first), device_.name(), "cudaEventCreate");
                check(cudaEventCreate(&e.second), device_.name(), "cudaEventCreate");
                events_.push_back(e);
            }
            cudaEventRecord(events_[used].first, stream_);
            launch(*n, launch_);
            cudaEventRecord(events_[used].second, stream_);
            timed.push_back(n);
            ++used;
        }
        check(cudaStreamSynchronize(stream_), device_.name(), "a kernel");
        for (size_t i = 0; i < used; ++i) {
            float ms = 0;
            cudaEventElapsedTime(&ms, events_[i].first, events_[i].second);
            auto& [total, count] = profile_[profile_key(*timed[i])];
            total += ms;
            ++count;
        }
    }

    void print_profile() const {
        std::vector<std::pair<double, std::string>> rows;
        double all = 0;
        for (const auto& [k, v] : profile_) {
            rows.emplace_back(v.first, k);
            all += v.first;
        }
        std::sort(rows.rbegin(), rows.rend());
        std::fprintf(stderr, "%s kernel time by op: %.1f ms in all\n", std::string(device_.name()).c_str(), all);
        for (const auto& [ms, k] : rows)
            std::fprintf(stderr, "  %-24s %9.2f ms %5.1f%% %8zu launches\n", k.c_str(), ms, 100 * ms / all, profile_.at(k).second);
    }

    // Records the launches into a graph; false (and the run launched directly later) when
    // the driver refuses, so a capture problem costs speed, never a result.
    bool capture(std::span<Tensor* const> nodes, Run& run) {
        cudaGraph_t graph = nullptr;
        run.no_graph = true;   // until the capture succeeds
        std::lock_guard lock(device_.mutex());
        if (cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        try {
            launch_all(nodes);
        } catch (...) {
            cudaStreamEndCapture(stream_, &graph);
            if (graph) cudaGraphDestroy(graph);
            cudaGetLastError();
            throw;
        }
        const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
        cudaError_t inst = cudaErrorUnknown;
        if (end == cudaSuccess && graph) inst = cudaGraphInstantiate(&run.exec, graph, 0);
        if (graph) cudaGraphDestroy(graph);
        if (inst != cudaSuccess) {
            cudaGetLastError();
            run.exec = nullptr;
            return false;
        }
        run.no_graph = false;
        return true;
    }

    void clear_runs() {
        for (auto& [k, r] : runs_)
            if (r.exec) cudaGraphExecDestroy(r.exec);
        runs_.clear();
    }

    CudaDevice& device_;
    cudaStream_t stream_ = nullptr;
    Launch launch_;
    std::map<Key, Run> runs_;
    std::vector<uint64_t> sig_;
    std::vector<std::pair<cudaEvent_t, cudaEvent_t>> events_;      // POCKET_CUDA_PROFILE
    std::map<std::string, std::pair<double, size_t>> profile_;     // key -> (ms, launches)
    size_t n_replayed_ = 0, n_captured_ = 0, n_direct_ = 0;        // POCKET_CUDA_STATS
};

}  // namespace

std::unique_ptr<Backend> make_backend(CudaDevice& device) { return std::make_unique<CudaBackend>(device); }

}  // namespace pocket::cuda
