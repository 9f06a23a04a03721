// Jinja tests (`x is defined`, `x is not none`, `n is divisibleby 3`), with Python's type rules:
// a bool is a number but not an integer, undefined is iterable (it iterates as empty).
#include "chat/builtins.hpp"

namespace pocket::jinja {

static bool compare_test(const std::string& name, const Value& v, const Value& other, bool& known) {
    known = true;
    if (name == "eq" || name == "equalto" || name == "==") return values_equal(v, other);
    if (name == "ne" || name == "!=") return !values_equal(v, other);
    if (name == "lt" || name == "lessthan" || name == "<") return compare_values(v, other) < 0;
    if (name == "le" || name == "<=") return compare_values(v, other) <= 0;
    if (name == "gt" || name == "greaterthan" || name == ">") return compare_values(v, other) > 0;
    if (name == "ge" || name == ">=") return compare_values(v, other) >= 0;
    known = false;
    return false;
}

bool apply_test(const std::string& name, const Value& v, const CallArgs& args) {
    using K = Value::Kind;
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "boolean") return v.is_bool();
    if (name == "true") return v.is_bool() && v.as_bool();
    if (name == "false") return v.is_bool() && !v.as_bool();
    if (name == "string") return v.is_string();
    if (name == "number") return v.is_number();
    if (name == "integer") return v.is_int();
    if (name == "float") return v.is_float();
    if (name == "mapping") return v.is_object() && !v.as_object().is_namespace;
    if (name == "iterable") return v.is_string() || v.is_array() || v.is_object() || v.is_undefined();
    if (name == "sequence") return v.is_string() || v.is_array() || v.is_object();
    if (name == "callable") return v.is_callable();
    if (name == "lower") return v.is_string() && apply_filter("lower", v, {}).as_string() == v.as_string();
    if (name == "upper") return v.is_string() && apply_filter("upper", v, {}).as_string() == v.as_string();
    if (name == "even" || name == "odd") {
        if (!v.is_int()) throw RuntimeError("'" + name + "' test needs an integer, got " + v.type_name());
        return (v.as_int() % 2 == 0) == (name == "even");
    }
    if (name == "divisibleby") {
        const Value& d = args.get(0, "num");
        if (!v.is_int() || !d.is_int()) throw RuntimeError("'divisibleby' needs integers");
        if (d.as_int() == 0) throw RuntimeError("divisibleby zero");
        return v.as_int() % d.as_int() == 0;
    }
    if (name == "in") {
        const Value& seq = args.get(0, "seq");
        if (seq.kind() == K::String) return v.is_string() && seq.as_string().find(v.as_string()) != std::string::npos;
        if (seq.kind() == K::Dict) return v.is_string() && seq.as_object().find(v.as_string());
        for (const auto& item : iterate(seq))
            if (values_equal(item, v)) return true;
        return false;
    }
    if (name == "sameas") {
        // Identity: the same object for lists/dicts, the same singleton or value otherwise.
        const Value& o = args.get(0, "other");
        if (v.kind() != o.kind()) return false;
        if (v.is_array()) return &v.as_array() == &o.as_array();
        if (v.is_object()) return &v.as_object() == &o.as_object();
        return values_equal(v, o);
    }
    bool known = false;
    bool r = compare_test(name, v, args.get(0, "other"), known);
    if (known) return r;
    throw RuntimeError("unknown test '" + name + "'");
}

}  // namespace pocket::jinja
