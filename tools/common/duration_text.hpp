#pragma once
// "42 s", "3 min 20 s", "2 h 05 min": an ETA as a person reads it.
#include <fmt/format.h>

#include <string>

namespace pocket::tools {

inline std::string duration_text(double seconds) {
    const auto s = static_cast<long long>(seconds + 0.5);
    if (s < 60) return fmt::format("{} s", s);
    if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
    return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
}

}  // namespace pocket::tools
