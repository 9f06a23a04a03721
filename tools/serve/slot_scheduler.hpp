#pragma once
// Continuous batching over -np slots. The slots share one Context of -c positions, one
// sequence each (llama-server's split: n_ctx / n_parallel per slot). One scheduler thread runs
// steps; a step is one batch (Context::decode_sequences) holding the next token of every slot
// that is generating, then prompt chunks of slots still reading their prompts, up to -b tokens
// in all (prompts always get at least 16, however many slots generate). A new request therefore starts at the next step, and a long prompt delays the others
// by one chunk per step, never by the whole prompt.
//
// A slot keeps its KV cache after a request; the next request it takes reuses the longest
// common prefix with its prompt (the scheduler gives a waiting request the free slot whose
// cache shares the most with it). Logits do not depend on batch sizes or on other slots, so a
// seeded request gives the same text whichever slot runs it, and beside whatever else runs.
#include "metrics.hpp"
#include "stop_strings.hpp"
#include "task.hpp"

#include "pocket/context.hpp"
#include "pocket/tokenizer.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace pocket::serve {

struct SchedulerOptions {
    uint32_t n_slots = 1;             // -np
    ContextOptions context;           // the whole context: n_ctx is -c, split among the slots
    std::chrono::milliseconds queue_timeout{30000};  // a request waiting longer for a slot gets 503
};

class SlotScheduler {
public:
    SlotScheduler(const Model& model, const SchedulerOptions& options, Metrics& metrics);
    ~SlotScheduler();
    SlotScheduler(const SlotScheduler&) = delete;
    SlotScheduler& operator=(const SlotScheduler&) = delete;

    uint32_t slot_context() const { return n_ctx_slot_; }

    // Queues a task. Throws ApiError: 400 when its prompt cannot fit in a slot, 503 when the
    // server is stopping.
    void submit(std::shared_ptr<Task> task);

    // Ends every task (queued or running) with 503 and joins the scheduler thread.
    void stop();

private:
    struct Slot {
        uint32_t seq = 0;             // its sequence in the context
        std::vector<TokenId> cached;  // the tokens in its sequence (cached.size() == ctx_->n_past(seq))
        std::shared_ptr<Task> task;   // null: free
        std::optional<TokenId> next;  // sampled, to be evaluated in the next step
        int logits_row = -1;          // its row of the last step's logits, or -1
        std::optional<Sampler> sampler;
        std::optional<TokenStreamDecoder> decoder;
        std::optional<StopMatcher> stops;
        size_t n_prompt_done = 0;     // prompt tokens in the cache
        size_t n_cached = 0;          // of which reused from the previous request
        size_t n_generated = 0;
    };

    void loop();
    void start(Slot& slot, std::shared_ptr<Task> task);
    void step();
    void generate_one(Slot& slot, std::span<const float> logits);
    void release(Slot& slot, Outcome outcome);
    Slot* best_free_slot(const std::vector<TokenId>& prompt);
    void expire_waiting(std::chrono::steady_clock::time_point now);

    const Model& model_;
    SchedulerOptions options_;
    Metrics& metrics_;
    uint32_t n_ctx_slot_ = 0;
    std::unique_ptr<Context> ctx_;
    std::vector<Slot> slots_;  // touched only by the scheduler thread
    size_t prompt_turn_ = 0;   // the slot whose prompt goes first into the next batch (turns rotate)

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<Task>> waiting_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace pocket::serve
