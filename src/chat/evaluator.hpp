#pragma once
// Renders a parsed Program against a set of global variables.
#include "chat/ast.hpp"

#include <string>

namespace pocket::jinja {

inline constexpr int kMaxCallDepth = 64;            // nested macro calls
inline constexpr uint64_t kMaxSteps = 5'000'000;   // statements run + loop iterations

// `globals` is copied: a template's `set` never changes the caller's object. Throws
// pocket::Error with a position for runtime errors, and with the template's own message for
// raise_exception.
std::string render_program(const Program& program, const Object& globals);

}  // namespace pocket::jinja
