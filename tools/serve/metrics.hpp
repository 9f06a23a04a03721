#pragma once
// Counters for GET /metrics, in Prometheus' text format. The scheduler thread adds to them;
// HTTP threads read them, so every field is atomic.
#include <atomic>
#include <cstdint>
#include <string>

namespace pocket::serve {

struct Metrics {
    std::atomic<uint64_t> requests_total{0};       // generation requests finished (any reason)
    std::atomic<uint64_t> requests_rejected{0};    // refused with 503 after waiting for a slot
    std::atomic<uint64_t> prompt_tokens{0};        // prompt tokens evaluated (cached ones not counted)
    std::atomic<uint64_t> prompt_tokens_cached{0}; // prompt tokens reused from a slot's KV cache
    std::atomic<uint64_t> generated_tokens{0};
    std::atomic<uint64_t> prompt_us{0};            // time spent evaluating prompts
    std::atomic<uint64_t> generation_us{0};        // time spent generating
    std::atomic<uint64_t> decode_steps{0};         // scheduler steps (one batch each)
    std::atomic<uint32_t> slots_busy{0};
    std::atomic<uint32_t> requests_waiting{0};
    uint32_t slots_total = 0;

    std::string prometheus() const;
};

}  // namespace pocket::serve
