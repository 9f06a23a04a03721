#pragma once
// What templates can call without defining it: filters, tests, methods of strings, lists and
// dicts, attribute/item access, and the global functions. These throw RuntimeError; the
// evaluator adds the template position and turns it into pocket::Error.
#include "chat/value.hpp"

#include <optional>
#include <stdexcept>
#include <string>

namespace pocket::jinja {

// Limits that keep a hostile template from exhausting memory.
inline constexpr size_t kMaxOutputBytes = 16u << 20;   // rendered text, and any one string
inline constexpr size_t kMaxSequence = 1u << 20;       // items in one list (range, *, ...)

// `obj.name` (dict key first, then a bound method) and `obj[key]`; undefined when missing.
Value get_attr(const Value& obj, const std::string& name);
Value get_item(const Value& obj, const Value& key);
Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step);

// `obj.name(args)` for the built-in methods; nullopt when `obj` has no such method.
std::optional<Value> call_method(const Value& obj, const std::string& name, const CallArgs& args);

Value apply_filter(const std::string& name, const Value& input, const CallArgs& args);
bool apply_test(const std::string& name, const Value& v, const CallArgs& args);

// The items `for x in value` visits: list items, dict keys, string characters.
std::vector<Value> iterate(const Value& v);

// raise_exception, range, namespace, dict, strftime_now.
void add_globals(Object& frame);

}  // namespace pocket::jinja
