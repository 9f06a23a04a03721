#pragma once
// pocket::Scheduler: runs a Graph on one backend, or splits it across several by layer
// (-ngl), inserting explicit copies where a tensor crosses from one backend to another.
//
//     pocket::Scheduler sched(*cpu);                  // one backend
//     sched.allocate(g);                              // plan the arena; inputs get memory
//     for (each step) {
//         pocket::tensor_set(*ids, tokens.data(), n_tokens * sizeof(int32_t));
//         pocket::tensor_set(*pos, positions.data(), n_tokens * sizeof(int32_t));
//         ...                                          // KV write rows, mask
//         sched.compute(g);
//         pocket::tensor_get(*logits, out.data(), logits->nbytes());
//     }
//
// Two backends, the last 20 of 32 layers on the second:
//     pocket::Scheduler sched({cpu.get(), gpu.get()}, [](int layer) { return layer >= 12 ? 1 : 0; });
//
// Memory: each backend gets one arena holding its graph inputs and intermediate results,
// placed by a liveness-based planner that reuses memory once a tensor's last reader ran.
// allocate() must be called again after the graph is rebuilt (e.g. a new batch size); the
// arenas are kept and grown only when needed.
//
// Debug: SchedulerOptions::poison, or the environment variable POCKET_POISON=1, fills the
// arena with NaN bytes when it is planned and each freed region right after its last reader
// ran, so a planner bug that aliases live tensors shows up as NaN in the results.
#include "pocket/backend.hpp"
#include "pocket/graph.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace pocket {

struct SchedulerOptions {
    bool poison = false;   // also enabled by POCKET_POISON=1
};

class Scheduler {
public:
    explicit Scheduler(Backend& backend, const SchedulerOptions& options = {});
    // backend_of_layer maps a node's layer tag (Graph::set_layer; -1 before the first layer)
    // to an index into `backends`. Graph inputs live on the backend of their first reader.
    // A node its backend does not support runs on the last backend (the CPU, by convention).
    Scheduler(std::vector<Backend*> backends, std::function<int(int layer)> backend_of_layer,
              const SchedulerOptions& options = {});
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    // Splits the graph, plans memory, reserves backend scratch. After this every input and
    // output tensor has memory. Throws pocket::Error when a node is supported nowhere.
    void allocate(Graph& g);
    // Runs the graph allocated last (inputs must be set).
    void compute(Graph& g);

    // Arena bytes planned for backend i by the last allocate(), and the sum of the sizes of
    // the tensors it holds (what a planner without reuse would need).
    size_t arena_bytes(size_t backend_index = 0) const;
    size_t unplanned_bytes(size_t backend_index = 0) const;
    // Number of runs of consecutive nodes on one backend, and the copies inserted between them.
    size_t n_splits() const;
    size_t n_copies() const;
    // Copies executed by all compute() calls so far (activations crossing devices, and any
    // leaf a backend could not reach: a weight here means a placement mistake).
    size_t n_copies_run() const;

private:
    struct State;
    std::unique_ptr<State> s_;
};

}  // namespace pocket
