#pragma once
// One generation request on its way between the HTTP thread that received it and the
// scheduler thread that runs it: the request going in, text pieces and the outcome coming
// out, a cancel flag going back (the client left, or the server is stopping).
#include "pocket/sampler.hpp"
#include "pocket/vocab.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace pocket::serve {

struct GenerationRequest {
    std::vector<TokenId> prompt;
    int64_t max_tokens = -1;  // -1: until the end of the slot's context
    SamplerOptions sampling;
    std::vector<std::string> stop;
};

enum class FinishReason { stop, length, cancelled, error };
inline const char* finish_reason_name(FinishReason r) {
    switch (r) {
        case FinishReason::stop: return "stop";
        case FinishReason::length: return "length";
        case FinishReason::cancelled: return "cancelled";
        case FinishReason::error: return "error";
    }
    return "error";
}

struct Outcome {
    FinishReason reason = FinishReason::stop;
    size_t prompt_tokens = 0;      // the whole prompt, cached part included (OpenAI's usage)
    size_t cached_tokens = 0;      // of which reused from the slot's KV cache
    size_t completion_tokens = 0;
    int error_status = 0;          // with FinishReason::error: the HTTP status to answer with
    std::string error_message;

    static Outcome of(FinishReason r) {
        Outcome o;
        o.reason = r;
        return o;
    }
};

class Task {
public:
    explicit Task(GenerationRequest request) : request_(std::move(request)), created_(std::chrono::steady_clock::now()) {}

    const GenerationRequest& request() const { return request_; }
    std::chrono::steady_clock::time_point created() const { return created_; }

    // --- scheduler side
    void emit(std::string piece) {
        if (piece.empty()) return;
        {
            std::lock_guard lk(mu_);
            text_ += piece;
            pieces_.push_back(std::move(piece));
        }
        cv_.notify_all();
    }
    void finish(Outcome outcome) {
        {
            std::lock_guard lk(mu_);
            outcome_ = std::move(outcome);
            done_ = true;
        }
        cv_.notify_all();
    }
    void fail(int status, std::string message) {
        Outcome o;
        o.reason = FinishReason::error;
        o.error_status = status;
        o.error_message = std::move(message);
        finish(std::move(o));
    }
    void mark_started() {
        {
            std::lock_guard lk(mu_);
            started_ = true;
        }
        cv_.notify_all();
    }
    bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

    // --- HTTP side
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

    // Takes the pieces that came (waiting up to `timeout` for one); `done` once the outcome is set
    // and every piece has been taken.
    std::vector<std::string> take(std::chrono::milliseconds timeout, bool& done) {
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, timeout, [&] { return done_ || !pieces_.empty(); });
        std::vector<std::string> out(std::make_move_iterator(pieces_.begin()), std::make_move_iterator(pieces_.end()));
        pieces_.clear();
        done = done_;
        return out;
    }
    // Blocks until a slot takes the task (true) or it ends before that (false: queue timeout,
    // shutdown), so that a stream can still answer with an error status.
    bool wait_started() {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return started_ || done_; });
        return started_;
    }
    // Waits up to `timeout` for the outcome; true once it is set.
    bool wait_done_for(std::chrono::milliseconds timeout) {
        std::unique_lock lk(mu_);
        return cv_.wait_for(lk, timeout, [&] { return done_; });
    }
    // Blocks until the outcome is set; returns the whole text.
    std::string wait() {
        std::unique_lock lk(mu_);
        cv_.wait(lk, [&] { return done_; });
        return text_;
    }
    Outcome outcome() const {
        std::lock_guard lk(mu_);
        return outcome_;
    }

private:
    GenerationRequest request_;
    std::chrono::steady_clock::time_point created_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::string> pieces_;
    std::string text_;
    Outcome outcome_;
    bool done_ = false;
    bool started_ = false;
    std::atomic<bool> cancelled_{false};
};

}  // namespace pocket::serve
