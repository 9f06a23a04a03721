#pragma once
// String helpers shared by the methods and the filters (Python semantics, ASCII case mapping).
#include "chat/value.hpp"

#include <string>

namespace pocket::jinja {

std::string ascii_upper(std::string s);
std::string ascii_lower(std::string s);
std::string ascii_title(std::string s);
std::string ascii_capitalize(const std::string& s);
// str.strip/lstrip/rstrip: `chars` undefined or none means whitespace.
std::string strip_chars(const std::string& s, const Value& chars, bool left, bool right);
// str.replace; count < 0 replaces all.
std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count);
// str.split; `sep` undefined or none splits on runs of whitespace; maxsplit < 0 is unlimited.
Array split_string(const std::string& s, const Value& sep, int64_t maxsplit);

}  // namespace pocket::jinja
