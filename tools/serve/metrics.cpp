#include "metrics.hpp"

#include <fmt/format.h>

namespace pocket::serve {
namespace {

void metric(std::string& out, const char* name, const char* type, const char* help, double value) {
    out += fmt::format("# HELP pocket_{} {}\n# TYPE pocket_{} {}\npocket_{} {}\n", name, help, name, type, name, value);
}

double per_second(uint64_t n, uint64_t us) { return us ? 1e6 * static_cast<double>(n) / static_cast<double>(us) : 0.0; }

}  // namespace

std::string Metrics::prometheus() const {
    std::string out;
    metric(out, "requests_total", "counter", "Generation requests finished.", static_cast<double>(requests_total.load()));
    metric(out, "requests_rejected_total", "counter", "Requests refused for want of a free slot.", static_cast<double>(requests_rejected.load()));
    metric(out, "prompt_tokens_total", "counter", "Prompt tokens evaluated.", static_cast<double>(prompt_tokens.load()));
    metric(out, "prompt_tokens_cached_total", "counter", "Prompt tokens reused from a slot's cache.", static_cast<double>(prompt_tokens_cached.load()));
    metric(out, "tokens_predicted_total", "counter", "Tokens generated.", static_cast<double>(generated_tokens.load()));
    metric(out, "prompt_seconds_total", "counter", "Time spent evaluating prompts.", static_cast<double>(prompt_us.load()) / 1e6);
    metric(out, "tokens_predicted_seconds_total", "counter", "Time spent generating.", static_cast<double>(generation_us.load()) / 1e6);
    metric(out, "prompt_tokens_per_second", "gauge", "Prompt tokens per second of prompt evaluation.", per_second(prompt_tokens.load(), prompt_us.load()));
    metric(out, "predicted_tokens_per_second", "gauge", "Generated tokens per second of generation.", per_second(generated_tokens.load(), generation_us.load()));
    metric(out, "decode_steps_total", "counter", "Scheduler steps (one batch of every busy slot each).", static_cast<double>(decode_steps.load()));
    metric(out, "slots_busy", "gauge", "Slots processing a request.", slots_busy.load());
    metric(out, "slots_total", "gauge", "Slots (-np).", slots_total);
    metric(out, "requests_waiting", "gauge", "Requests waiting for a slot.", requests_waiting.load());
    return out;
}

}  // namespace pocket::serve
