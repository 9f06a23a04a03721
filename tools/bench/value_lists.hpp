#pragma once
// llama-bench's value lists: "-p 128,512", and ranges in them, "16-64+16" (16, 32, 48, 64:
// first-last+step) or "16-256*2" (16, 32, ..., 256: first-last*factor); "-pg 512,128" pairs.
// Each value is range-checked here, before any arithmetic with it.
#include "../common/flag_checks.hpp"
#include "pocket/error.hpp"

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pocket::tools {

inline int64_t parse_integer(std::string_view flag, std::string_view text) {
    int64_t v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || p != text.data() + text.size()) throw Error("{} {}: not an integer", flag, text);
    return v;
}

// One comma-separated item: N, A-B, A-B+S or A-B*M; every value within [lo, hi].
inline void expand_item(std::string_view flag, std::string_view item, int64_t lo, int64_t hi, std::vector<int>& out) {
    // A leading '-' is a sign (-t -1), not a range.
    const size_t dash = item.find('-', 1);
    if (dash == std::string_view::npos) {
        const int64_t v = parse_integer(flag, item);
        check_range(flag, v, lo, hi);
        out.push_back(static_cast<int>(v));
        return;
    }
    const std::string_view first_text = item.substr(0, dash), rest = item.substr(dash + 1);
    const size_t op = rest.find_first_of("+*");
    const int64_t first = parse_integer(flag, first_text);
    const int64_t last = parse_integer(flag, rest.substr(0, op));
    const int64_t step = op == std::string_view::npos ? 1 : parse_integer(flag, rest.substr(op + 1));
    const bool times = op != std::string_view::npos && rest[op] == '*';
    check_range(flag, first, lo, hi);
    check_range(flag, last, lo, hi);
    if (last < first) throw Error("{} {}: the range ends before it starts", flag, item);
    if (times ? (step < 2 || first < 1) : step < 1)
        throw Error("{} {}: the step must be {}", flag, item, times ? "a factor of at least 2 from a start of at least 1" : "at least 1");
    for (int64_t v = first; v <= last; v = times ? v * step : v + step) {
        out.push_back(static_cast<int>(v));
        if (out.size() > 10000) throw Error("{} {}: more than 10000 values", flag, item);
    }
}

inline std::vector<int> int_list(std::string_view flag, const std::vector<std::string>& items, int64_t lo, int64_t hi) {
    std::vector<int> out;
    for (const std::string& item : items) expand_item(flag, item, lo, hi, out);
    return out;
}

// -pg PP,TG: each value one pair.
inline std::pair<int, int> pp_tg_pair(std::string_view text) {
    const size_t comma = text.find(',');
    if (comma == std::string_view::npos || text.find(',', comma + 1) != std::string_view::npos)
        throw Error("-pg {}: must be PP,TG (e.g. -pg 512,128)", text);
    const int64_t pp = parse_integer("-pg", text.substr(0, comma)), tg = parse_integer("-pg", text.substr(comma + 1));
    check_range("-pg", pp, 0, kMaxTokens);
    check_range("-pg", tg, 0, kMaxTokens);
    return {static_cast<int>(pp), static_cast<int>(tg)};
}

}  // namespace pocket::tools
