#pragma once
// Jinja parser: tokens to a Program. Syntax errors throw pocket::Error naming the line and
// column. Nesting is capped so that a hostile template cannot overflow the stack.
#include "chat/ast.hpp"

#include <memory>
#include <string_view>

namespace pocket::jinja {

// Parses template source (newlines are normalized and one trailing newline dropped first).
std::shared_ptr<const Program> parse_template(std::string_view source);

inline constexpr int kMaxParseDepth = 200;

}  // namespace pocket::jinja
