// Attribute, item and slice access, and iteration. Missing things are undefined rather than
// errors, as with Jinja's default Undefined: `message.tool_calls` on a plain message is falsy.
#include "chat/builtins.hpp"

#include <algorithm>

namespace pocket::jinja {

static bool has_builtin_method(const Value& obj, const std::string& name) {
    static const char* const string_methods[] = {
        "strip", "lstrip", "rstrip", "startswith", "endswith", "split", "rsplit", "upper", "lower",
        "replace", "title", "capitalize", "format", "find", "rfind", "count", "join", "splitlines",
        "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower"};
    static const char* const list_methods[] = {"append", "pop", "insert", "extend", "index", "count", "reverse", "copy"};
    static const char* const dict_methods[] = {"get", "items", "keys", "values", "update", "pop", "setdefault", "copy"};
    auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), name) != std::end(list); };
    if (obj.is_string()) return in(string_methods);
    if (obj.is_array()) return in(list_methods);
    if (obj.is_object() && !obj.as_object().is_namespace) return in(dict_methods);
    return false;
}

Value get_attr(const Value& obj, const std::string& name) {
    if (obj.is_object())
        if (const Value* v = obj.as_object().find(name)) return *v;
    if (has_builtin_method(obj, name)) {
        // A method used as a value (`x.items` without a call): bind it.
        return make_callable(name, [obj, name](const CallArgs& args) {
            auto r = call_method(obj, name, args);
            return r ? *r : Value();
        });
    }
    return Value();
}

// Python index normalization; nullopt when out of range.
static std::optional<size_t> normalize_index(int64_t i, size_t size) {
    auto n = static_cast<int64_t>(size);
    if (i < 0) i += n;
    if (i < 0 || i >= n) return std::nullopt;
    return static_cast<size_t>(i);
}

Value get_item(const Value& obj, const Value& key) {
    if (obj.is_object()) {
        if (key.is_string()) {
            if (const Value* v = obj.as_object().find(key.as_string())) return *v;
            return get_attr(obj, key.as_string());
        }
        return Value();
    }
    if (key.is_string()) return get_attr(obj, key.as_string());
    if (!(key.is_int() || key.is_bool())) return Value();
    int64_t i = key.is_int() ? key.as_int() : key.as_bool();
    if (obj.is_array()) {
        auto idx = normalize_index(i, obj.as_array().size());
        return idx ? obj.as_array()[*idx] : Value();
    }
    if (obj.is_string()) {
        auto offs = codepoint_offsets(obj.as_string());
        auto idx = normalize_index(i, offs.size() - 1);
        if (!idx) return Value();
        return Value(obj.as_string().substr(offs[*idx], offs[*idx + 1] - offs[*idx]));
    }
    return Value();
}

Value get_slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
    auto as_opt = [](const Value& v, const char* what) -> std::optional<int64_t> {
        if (v.is_undefined() || v.is_none()) return std::nullopt;
        if (v.is_int()) return v.as_int();
        if (v.is_bool()) return int64_t{v.as_bool()};
        throw RuntimeError(std::string("slice ") + what + " must be an integer or none");
    };
    std::optional<int64_t> start = as_opt(start_v, "start"), stop = as_opt(stop_v, "stop"), step_o = as_opt(step_v, "step");
    int64_t step = step_o.value_or(1);
    if (step == 0) throw RuntimeError("slice step cannot be zero");

    std::vector<size_t> offs;
    int64_t n = 0;
    if (obj.is_array()) {
        n = static_cast<int64_t>(obj.as_array().size());
    } else if (obj.is_string()) {
        offs = codepoint_offsets(obj.as_string());
        n = static_cast<int64_t>(offs.size()) - 1;
    } else if (obj.is_undefined()) {
        return Value();
    } else {
        throw RuntimeError("'" + obj.type_name() + "' object is not subscriptable");
    }
    // Python's slice.indices(): clamp into range, defaults depending on the step's sign.
    auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
        if (!v) return dflt;
        int64_t x = *v;
        if (x < 0) x += n;
        if (step > 0) return std::clamp<int64_t>(x, 0, n);
        return std::clamp<int64_t>(x, -1, n - 1);
    };
    int64_t lo = clamp(start, step > 0 ? 0 : n - 1);
    int64_t hi = clamp(stop, step > 0 ? n : -1);
    std::vector<size_t> picked;
    for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) picked.push_back(static_cast<size_t>(i));
    if (obj.is_array()) {
        Array out;
        out.reserve(picked.size());
        for (size_t i : picked) out.push_back(obj.as_array()[i]);
        return Value(std::move(out));
    }
    std::string out;
    const std::string& s = obj.as_string();
    for (size_t i : picked) out.append(s, offs[i], offs[i + 1] - offs[i]);
    return Value(std::move(out));
}

std::vector<Value> iterate(const Value& v) {
    std::vector<Value> items;
    switch (v.kind()) {
        case Value::Kind::List: return v.as_array();
        case Value::Kind::Dict:
            for (const auto& [k, _] : v.as_object().entries) items.emplace_back(k);
            return items;
        case Value::Kind::String: {
            auto offs = codepoint_offsets(v.as_string());
            for (size_t i = 0; i + 1 < offs.size(); ++i)
                items.emplace_back(v.as_string().substr(offs[i], offs[i + 1] - offs[i]));
            return items;
        }
        case Value::Kind::Undefined: return items;
        default: throw RuntimeError("'" + v.type_name() + "' object is not iterable");
    }
}

}  // namespace pocket::jinja
