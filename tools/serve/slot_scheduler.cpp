#include "slot_scheduler.hpp"

#include "api_error.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace pocket::serve {
namespace {

using Clock = std::chrono::steady_clock;

size_t common_prefix(const std::vector<TokenId>& a, const std::vector<TokenId>& b) {
    const size_t n = std::min(a.size(), b.size());
    size_t i = 0;
    while (i < n && a[i] == b[i]) ++i;
    return i;
}

}  // namespace

SlotScheduler::SlotScheduler(const Model& model, const SchedulerOptions& options, Metrics& metrics)
    : model_(model), options_(options), metrics_(metrics) {
    slots_.resize(std::max<uint32_t>(options.n_slots, 1));
    ContextOptions co = options.context;
    co.n_seq = static_cast<uint32_t>(slots_.size());
    ctx_ = std::make_unique<Context>(model, co);
    for (size_t i = 0; i < slots_.size(); ++i) slots_[i].seq = static_cast<uint32_t>(i);
    n_ctx_slot_ = ctx_->n_ctx();
    metrics_.slots_total = static_cast<uint32_t>(slots_.size());
    thread_ = std::thread([this] { loop(); });
}

SlotScheduler::~SlotScheduler() { stop(); }

void SlotScheduler::submit(std::shared_ptr<Task> task) {
    const size_t n = task->request().prompt.size();
    if (n == 0) throw ApiError(400, "the prompt is empty", "prompt");
    // One position stays free for the first generated token.
    if (n >= n_ctx_slot_)
        throw ApiError(400, fmt::format("the prompt is {} tokens long, more than a slot's context holds ({} tokens: -c divided by -np)", n, n_ctx_slot_ - 1));
    {
        std::lock_guard lk(mu_);
        if (stopping_) throw ApiError(503, "the server is shutting down");
        waiting_.push_back(std::move(task));
        metrics_.requests_waiting = static_cast<uint32_t>(waiting_.size());
    }
    cv_.notify_all();
}

void SlotScheduler::stop() {
    {
        std::lock_guard lk(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
}

SlotScheduler::Slot* SlotScheduler::best_free_slot(const std::vector<TokenId>& prompt) {
    Slot* best = nullptr;
    size_t best_len = 0;
    for (Slot& s : slots_) {
        if (s.task) continue;
        const size_t len = common_prefix(s.cached, prompt);
        if (!best || len > best_len) best = &s, best_len = len;
    }
    return best;
}

void SlotScheduler::expire_waiting(Clock::time_point now) {
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        if ((*it)->cancelled()) {
            (*it)->finish(Outcome::of(FinishReason::cancelled));
            it = waiting_.erase(it);
        } else if (now - (*it)->created() > options_.queue_timeout) {
            ++metrics_.requests_rejected;  // counted before the client hears of it
            (*it)->fail(503, "no free slot: every slot stayed busy for the queue timeout");
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
}

void SlotScheduler::loop() {
    while (true) {
        std::vector<std::pair<Slot*, std::shared_ptr<Task>>> starting;
        {
            std::unique_lock lk(mu_);
            if (stopping_) break;
            expire_waiting(Clock::now());
            while (!waiting_.empty()) {
                Slot* s = best_free_slot(waiting_.front()->request().prompt);
                if (!s) break;
                s->task = waiting_.front();  // taken now, so best_free_slot skips it
                starting.emplace_back(s, std::move(waiting_.front()));
                waiting_.pop_front();
            }
            metrics_.requests_waiting = static_cast<uint32_t>(waiting_.size());
            const bool busy = !starting.empty() || std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) { return s.task != nullptr; });
            if (!busy) {
                // Wake for new work, and now and then to time out waiting requests.
                cv_.wait_for(lk, std::chrono::milliseconds(waiting_.empty() ? 1000 : 50));
                continue;
            }
        }
        for (auto& [slot, task] : starting) start(*slot, std::move(task));
        step();
    }
    // Stopping: nothing runs any more; every client gets an answer.
    std::lock_guard lk(mu_);
    for (Slot& s : slots_)
        if (s.task) {
            s.task->fail(503, "the server is shutting down");
            s.task.reset();
        }
    for (auto& t : waiting_) t->fail(503, "the server is shutting down");
    waiting_.clear();
    metrics_.slots_busy = 0;
    metrics_.requests_waiting = 0;
}

void SlotScheduler::start(Slot& slot, std::shared_ptr<Task> task) {
    const auto& prompt = task->request().prompt;
    // Reuse the cached prefix, but evaluate at least the last prompt token: its logits give
    // the first generated token.
    const size_t keep = std::min(common_prefix(slot.cached, prompt), prompt.size() - 1);
    ctx_->truncate(slot.seq, static_cast<uint32_t>(keep));
    slot.cached.resize(keep);
    slot.next.reset();
    slot.n_prompt_done = keep;
    slot.n_cached = keep;
    slot.n_generated = 0;
    slot.sampler.emplace(task->request().sampling);
    for (TokenId t : prompt) slot.sampler->accept(t);  // the penalties see the prompt, as in `run`
    slot.decoder.emplace(model_.tokenizer());
    slot.stops.emplace(task->request().stop);
    slot.task = std::move(task);
    slot.task->mark_started();
    ++metrics_.slots_busy;
    metrics_.prompt_tokens_cached += keep;
}

void SlotScheduler::release(Slot& slot, Outcome outcome) {
    outcome.prompt_tokens = slot.task->request().prompt.size();
    outcome.cached_tokens = slot.n_cached;
    outcome.completion_tokens = slot.n_generated;
    // Counted before the client hears of it, so that /metrics agrees with what it has seen.
    --metrics_.slots_busy;
    ++metrics_.requests_total;
    slot.task->finish(std::move(outcome));
    slot.task.reset();
    slot.next.reset();
}

void SlotScheduler::step() {
    for (Slot& s : slots_)
        if (s.task && s.task->cancelled()) release(s, Outcome::of(FinishReason::cancelled));
    // The batch: every generating slot's next token first, then prompt chunks (slots taking
    // turns at going first) while -b allows.
    std::vector<SeqToken> batch;
    std::vector<Slot*> in_batch;
    for (Slot& s : slots_) {
        s.logits_row = -1;
        if (s.task && s.next) {
            batch.push_back({*s.next, s.seq, true});
            in_batch.push_back(&s);
        }
    }
    const size_t n_generating = batch.size();
    // Prompts get what -b leaves, and always some: with more generating slots than -b, a new
    // request still starts.
    const size_t n_batch = options_.context.n_batch;
    size_t budget = std::max(n_batch > n_generating ? n_batch - n_generating : 0, std::min<size_t>(n_batch, 16));
    for (size_t k = 0; k < slots_.size() && budget > 0; ++k) {
        Slot& s = slots_[(prompt_turn_ + k) % slots_.size()];
        if (!s.task || s.next) continue;
        const auto& prompt = s.task->request().prompt;
        if (s.n_prompt_done >= prompt.size()) continue;
        const size_t n = std::min(prompt.size() - s.n_prompt_done, budget);
        for (size_t i = 0; i < n; ++i)
            batch.push_back({prompt[s.n_prompt_done + i], s.seq, s.n_prompt_done + i + 1 == prompt.size()});
        in_batch.push_back(&s);
        budget -= n;
    }
    prompt_turn_ = (prompt_turn_ + 1) % slots_.size();
    if (batch.empty()) return;

    const auto t0 = Clock::now();
    try {
        ctx_->decode_sequences(batch);
    } catch (const std::exception& e) {
        // Nothing was kept (the sequences did not advance, their caches stay valid): every
        // slot in the batch ends with the error.
        spdlog::error("decoding a batch failed: {}", e.what());
        for (Slot* s : in_batch) {
            Outcome o;
            o.reason = FinishReason::error;
            o.error_status = 500;
            o.error_message = e.what();
            release(*s, std::move(o));
        }
        return;
    }
    // The step's time, shared between prompt and generation in proportion to their tokens.
    const auto us = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
    const uint64_t gen_us = us * n_generating / batch.size();
    metrics_.generation_us += gen_us;
    metrics_.prompt_us += us - gen_us;
    metrics_.prompt_tokens += batch.size() - n_generating;
    ++metrics_.decode_steps;

    int row = 0;
    for (const SeqToken& t : batch) {
        Slot& s = slots_[t.seq];
        s.cached.push_back(t.token);
        if (s.next) s.next.reset();
        else ++s.n_prompt_done;
        if (t.logits) s.logits_row = row++;
    }
    for (Slot& s : slots_) {
        if (!s.task || s.logits_row < 0) continue;
        try {
            generate_one(s, ctx_->logits(static_cast<size_t>(s.logits_row)));
        } catch (const std::exception& e) {  // this slot's request fails; the server goes on
            spdlog::error("slot {}: {}", s.seq, e.what());
            Outcome o;
            o.reason = FinishReason::error;
            o.error_status = 500;
            o.error_message = e.what();
            release(s, std::move(o));
        }
    }
}

// Samples the slot's next token from its logits; emits it, or finishes the request.
void SlotScheduler::generate_one(Slot& slot, std::span<const float> logits) {
    const GenerationRequest& req = slot.task->request();
    const Vocab& vocab = model_.tokenizer().vocab();
    auto finish = [&](FinishReason reason) {
        bool stopped = false;
        std::string rest = slot.stops->push(slot.decoder->finish(), stopped);
        if (!stopped) rest += slot.stops->flush();
        slot.task->emit(std::move(rest));
        release(slot, Outcome::of(stopped ? FinishReason::stop : reason));
    };
    if (req.max_tokens >= 0 && slot.n_generated >= static_cast<uint64_t>(req.max_tokens)) return finish(FinishReason::length);

    const TokenId next = slot.sampler->sample(logits);
    slot.sampler->accept(next);
    ++slot.n_generated;
    ++metrics_.generated_tokens;
    if (vocab.is_eog(next)) return finish(FinishReason::stop);

    bool stopped = false;
    slot.task->emit(slot.stops->push(slot.decoder->push(next), stopped));
    if (stopped) return release(slot, Outcome::of(FinishReason::stop));
    if (req.max_tokens >= 0 && slot.n_generated >= static_cast<uint64_t>(req.max_tokens)) return finish(FinishReason::length);
    if (ctx_->n_past(slot.seq) >= n_ctx_slot_) return finish(FinishReason::length);  // the slot's context is full
    slot.next = next;
}

}  // namespace pocket::serve
