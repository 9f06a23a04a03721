#pragma once
// Server-sent events as OpenAI streams them: each JSON object on one `data:` line followed by
// a blank line, and `data: [DONE]` after the last one.
#include "api_error.hpp"

#include <string>

namespace pocket::serve {

inline std::string sse_event(const nlohmann::json& j) { return "data: " + dump_json(j) + "\n\n"; }
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

}  // namespace pocket::serve
