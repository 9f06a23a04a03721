#pragma once
// The value model of the Jinja interpreter: Python-like dynamic values. Lists and dicts are
// held by shared_ptr so that, as in Python, `ns.x = ...` and `list.append(...)` mutate the
// one object every name refers to.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace pocket::jinja {

// An error while rendering; the evaluator adds the template position and rethrows it as
// pocket::Error.
struct RuntimeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Value;
struct Object;
struct Callable;
using Array = std::vector<Value>;

struct UndefinedTag {
    bool operator==(const UndefinedTag&) const = default;
};

class Value {
public:
    enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Function };

    Value() = default;  // undefined
    Value(std::nullptr_t) : v_(nullptr) {}
    Value(bool b) : v_(b) {}
    Value(int i) : v_(int64_t{i}) {}
    Value(int64_t i) : v_(i) {}
    Value(double d) : v_(d) {}
    Value(std::string s) : v_(std::move(s)) {}
    Value(std::string_view s) : v_(std::string(s)) {}
    Value(const char* s) : v_(std::string(s)) {}
    Value(Array a) : v_(std::make_shared<Array>(std::move(a))) {}
    Value(std::shared_ptr<Array> a) : v_(std::move(a)) {}
    Value(std::shared_ptr<Object> o) : v_(std::move(o)) {}
    Value(std::shared_ptr<Callable> c) : v_(std::move(c)) {}

    Kind kind() const { return static_cast<Kind>(v_.index()); }
    bool is_undefined() const { return kind() == Kind::Undefined; }
    bool is_none() const { return kind() == Kind::None; }
    bool is_bool() const { return kind() == Kind::Bool; }
    bool is_int() const { return kind() == Kind::Int; }
    bool is_float() const { return kind() == Kind::Float; }
    bool is_number() const { return is_int() || is_float() || is_bool(); }
    bool is_string() const { return kind() == Kind::String; }
    bool is_array() const { return kind() == Kind::List; }
    bool is_object() const { return kind() == Kind::Dict; }
    bool is_callable() const { return kind() == Kind::Function; }

    bool as_bool() const { return std::get<bool>(v_); }
    int64_t as_int() const { return std::get<int64_t>(v_); }
    double as_float() const { return std::get<double>(v_); }
    double as_number() const;  // int, float or bool as a double
    const std::string& as_string() const { return std::get<std::string>(v_); }
    Array& as_array() const { return *std::get<std::shared_ptr<Array>>(v_); }
    Object& as_object() const { return *std::get<std::shared_ptr<Object>>(v_); }
    const Callable& as_callable() const { return *std::get<std::shared_ptr<Callable>>(v_); }

    // Python truthiness: empty strings/lists/dicts, 0, None and undefined are false.
    bool truthy() const;
    // Python's str(): what `{{ value }}` prints. Undefined prints as nothing.
    std::string to_str() const;
    // Python's repr(), used for strings inside printed lists and dicts.
    std::string repr() const;
    // json.dumps(value, ensure_ascii=False, indent=indent) as HF transformers' tojson does;
    // indent < 0 means none.
    std::string to_json(int indent = -1) const;
    // Jinja/Python type name, for error messages.
    std::string type_name() const;

private:
    std::string repr_at(int depth) const;
    std::variant<UndefinedTag, std::nullptr_t, bool, int64_t, double, std::string, std::shared_ptr<Array>,
                 std::shared_ptr<Object>, std::shared_ptr<Callable>>
        v_;
};

// An insertion-ordered dict (Python 3.7+ order, which templates rely on for `.items()`).
struct Object {
    std::vector<std::pair<std::string, Value>> entries;
    std::unordered_map<std::string, size_t> index;
    bool is_namespace = false;

    const Value* find(std::string_view key) const;
    void set(const std::string& key, Value v);
    bool erase(const std::string& key);
};

Value make_object(std::vector<std::pair<std::string, Value>> entries = {});

// Arguments of a call: positional, then keyword.
struct CallArgs {
    std::vector<Value> positional;
    std::vector<std::pair<std::string, Value>> keyword;

    // The argument at position `pos` or with keyword `name`; undefined when neither.
    const Value& get(size_t pos, std::string_view name) const;
    const Value* find_keyword(std::string_view name) const;
};

struct Callable {
    std::string name;
    std::function<Value(const CallArgs&)> fn;
};

Value make_callable(std::string name, std::function<Value(const CallArgs&)> fn);

// Python equality (1 == 1.0 == True; deep for lists and dicts).
bool values_equal(const Value& a, const Value& b);
// Python ordering for numbers, strings and lists; throws pocket::Error for other kinds.
int compare_values(const Value& a, const Value& b);

// Python float repr: shortest round-trip form, always with a '.' or exponent.
std::string format_float(double d);

// UTF-8 helpers: templates index, slice and measure strings by code point, as Python does.
std::vector<size_t> codepoint_offsets(std::string_view s);  // start of each code point, plus s.size()
size_t codepoint_count(std::string_view s);

}  // namespace pocket::jinja
