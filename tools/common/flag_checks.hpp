#pragma once
// Range checks of flag values, each failing with one line that names the flag, the value and
// what it may be; and the bound on sizes that every tool checks before arithmetic with them.
#include "pocket/error.hpp"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace pocket::tools {

// More threads than this is a typing error, not a machine.
inline constexpr int64_t kMaxThreads = 4096;
// Token counts (prompt, generation, context, batch) above this cannot be allocated for any
// model; checked before they are added or multiplied.
inline constexpr int64_t kMaxTokens = int64_t{1} << 24;

inline void check_range(std::string_view flag, int64_t value, int64_t lo, int64_t hi, std::string_view meaning = {}) {
    if (value < lo || value > hi)
        throw Error("{} {}: must be between {} and {}{}{}", flag, value, lo, hi, meaning.empty() ? "" : " ", meaning);
}

inline void check_probability(std::string_view flag, double value) {
    if (!(value >= 0.0 && value <= 1.0)) throw Error("{} {}: must be between 0 and 1", flag, value);
}

inline void check_finite(std::string_view flag, double value) {
    if (!std::isfinite(value)) throw Error("{} {}: must be a finite number", flag, value);
}

// -fa on|off|auto (llama.cpp; 1/0, true/false too). Returns true for off: attention as
// separate ops (ContextOptions::flash_attn); auto is the fused op, which every backend has.
inline bool flash_attn_off(std::string_view value) {
    for (std::string_view v : {"on", "auto", "1", "true", "enabled"})
        if (value == v) return false;
    for (std::string_view v : {"off", "0", "false", "disabled"})
        if (value == v) return true;
    throw Error("-fa {}: must be on, off or auto", value);
}

inline void check_threads(std::string_view flag, int64_t value, bool zero_means_all = false) {
    check_range(flag, value, zero_means_all ? 0 : 1, kMaxThreads, zero_means_all ? "(0: all hardware threads)" : "");
}

}  // namespace pocket::tools
