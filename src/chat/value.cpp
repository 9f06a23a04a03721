// Python semantics for the interpreter's values: truthiness, str(), repr(), json.dumps,
// equality and ordering.
#include "chat/value.hpp"

#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace pocket::jinja {

double Value::as_number() const {
    switch (kind()) {
        case Kind::Int: return static_cast<double>(as_int());
        case Kind::Float: return as_float();
        case Kind::Bool: return as_bool() ? 1.0 : 0.0;
        default: throw RuntimeError("expected a number, got " + type_name());
    }
}

bool Value::truthy() const {
    switch (kind()) {
        case Kind::Undefined:
        case Kind::None: return false;
        case Kind::Bool: return as_bool();
        case Kind::Int: return as_int() != 0;
        case Kind::Float: return as_float() != 0.0;
        case Kind::String: return !as_string().empty();
        case Kind::List: return !as_array().empty();
        case Kind::Dict: return !as_object().entries.empty();
        case Kind::Function: return true;
    }
    return false;
}

std::string format_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
    char buf[64];
    // Python's repr switches to exponent form at 1e16 and below 1e-4; to_chars' shortest
    // form picks differently, so choose the notation the way Python does.
    double a = std::fabs(d);
    bool sci = a != 0.0 && (a >= 1e16 || a < 1e-4);
    auto res = sci ? std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific)
                   : std::to_chars(buf, buf + sizeof buf, d, std::chars_format::fixed);
    std::string s(buf, res.ptr);
    if (sci) {
        // to_chars writes "1e+16" like Python, but Python pads the exponent to 2 digits.
        auto e = s.find('e');
        std::string mant = s.substr(0, e), ex = s.substr(e + 1);
        char sign = ex[0];
        std::string digits = ex.substr(1);
        if (digits.size() < 2) digits = "0" + digits;
        return mant + "e" + sign + digits;
    }
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
}

static std::string repr_string(const std::string& s) {
    char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
    std::string out(1, quote);
    for (unsigned char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == static_cast<unsigned char>(quote)) { out += '\\'; out += static_cast<char>(c); }
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
    out += quote;
    return out;
}

std::string Value::to_str() const {
    switch (kind()) {
        case Kind::Undefined: return "";
        case Kind::String: return as_string();
        default: return repr();
    }
}

// Lists can contain themselves (`l.append(l)`): nesting is capped instead of recursing forever.
constexpr int kMaxValueDepth = 256;

static void check_depth(int depth) {
    if (depth > kMaxValueDepth) throw RuntimeError("value nested too deeply (or containing itself)");
}

std::string Value::repr() const { return repr_at(0); }

std::string Value::repr_at(int depth) const {
    check_depth(depth);
    switch (kind()) {
        case Kind::Undefined: return "";
        case Kind::None: return "None";
        case Kind::Bool: return as_bool() ? "True" : "False";
        case Kind::Int: return std::to_string(as_int());
        case Kind::Float: return format_float(as_float());
        case Kind::String: return repr_string(as_string());
        case Kind::List: {
            std::string out = "[";
            bool first = true;
            for (const auto& v : as_array()) {
                if (!first) out += ", ";
                first = false;
                out += v.repr_at(depth + 1);
            }
            return out + "]";
        }
        case Kind::Dict: {
            const Object& o = as_object();
            std::string out = o.is_namespace ? "<Namespace {" : "{";
            bool first = true;
            for (const auto& [k, v] : o.entries) {
                if (!first) out += ", ";
                first = false;
                out += repr_string(k) + ": " + v.repr_at(depth + 1);
            }
            return out + (o.is_namespace ? "}>" : "}");
        }
        case Kind::Function: return "<function " + as_callable().name + ">";
    }
    return "";
}

static void json_string(std::string& out, const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                // ensure_ascii=False: bytes >= 0x80 (UTF-8) pass through; only controls escape.
                if (c < 0x20 || c == 0x7f) out += fmt::format("\\u{:04x}", c);
                else out += static_cast<char>(c);
        }
    }
    out += '"';
}

static void json_value(std::string& out, const Value& v, int indent, int level) {
    check_depth(level);
    auto newline = [&](int lvl) {
        out += '\n';
        out.append(static_cast<size_t>(indent * lvl), ' ');
    };
    // json.dumps: ", " and ": " without indent; "," and ": " (plus newlines) with one.
    const char* item_sep = indent < 0 ? ", " : ",";
    switch (v.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None: out += "null"; break;
        case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; break;
        case Value::Kind::Int: out += std::to_string(v.as_int()); break;
        case Value::Kind::Float: {
            double d = v.as_float();
            out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : format_float(d);
            break;
        }
        case Value::Kind::String: json_string(out, v.as_string()); break;
        case Value::Kind::List: {
            const Array& a = v.as_array();
            if (a.empty()) { out += "[]"; break; }
            out += '[';
            for (size_t i = 0; i < a.size(); ++i) {
                if (i) out += item_sep;
                if (indent >= 0) newline(level + 1);
                json_value(out, a[i], indent, level + 1);
            }
            if (indent >= 0) newline(level);
            out += ']';
            break;
        }
        case Value::Kind::Dict: {
            const Object& o = v.as_object();
            if (o.entries.empty()) { out += "{}"; break; }
            out += '{';
            for (size_t i = 0; i < o.entries.size(); ++i) {
                if (i) out += item_sep;
                if (indent >= 0) newline(level + 1);
                json_string(out, o.entries[i].first);
                out += ": ";
                json_value(out, o.entries[i].second, indent, level + 1);
            }
            if (indent >= 0) newline(level);
            out += '}';
            break;
        }
        case Value::Kind::Function: throw RuntimeError("tojson: a function is not JSON serializable");
    }
}

std::string Value::to_json(int indent) const {
    std::string out;
    json_value(out, *this, indent, 0);
    return out;
}

std::string Value::type_name() const {
    switch (kind()) {
        case Kind::Undefined: return "undefined";
        case Kind::None: return "NoneType";
        case Kind::Bool: return "bool";
        case Kind::Int: return "int";
        case Kind::Float: return "float";
        case Kind::String: return "str";
        case Kind::List: return "list";
        case Kind::Dict: return as_object().is_namespace ? "Namespace" : "dict";
        case Kind::Function: return "function";
    }
    return "?";
}

const Value* Object::find(std::string_view key) const {
    auto it = index.find(std::string(key));
    return it == index.end() ? nullptr : &entries[it->second].second;
}

void Object::set(const std::string& key, Value v) {
    auto it = index.find(key);
    if (it != index.end()) {
        entries[it->second].second = std::move(v);
        return;
    }
    index.emplace(key, entries.size());
    entries.emplace_back(key, std::move(v));
}

bool Object::erase(const std::string& key) {
    auto it = index.find(key);
    if (it == index.end()) return false;
    entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(it->second));
    index.clear();
    for (size_t i = 0; i < entries.size(); ++i) index.emplace(entries[i].first, i);
    return true;
}

Value make_object(std::vector<std::pair<std::string, Value>> entries) {
    auto o = std::make_shared<Object>();
    for (auto& [k, v] : entries) o->set(k, std::move(v));
    return Value(std::move(o));
}

const Value* CallArgs::find_keyword(std::string_view name) const {
    for (const auto& [k, v] : keyword)
        if (k == name) return &v;
    return nullptr;
}

const Value& CallArgs::get(size_t pos, std::string_view name) const {
    static const Value undefined;
    if (pos < positional.size()) return positional[pos];
    if (const Value* v = find_keyword(name)) return *v;
    return undefined;
}

Value make_callable(std::string name, std::function<Value(const CallArgs&)> fn) {
    return Value(std::make_shared<Callable>(Callable{std::move(name), std::move(fn)}));
}

static bool equal_at(const Value& a, const Value& b, int depth);

bool values_equal(const Value& a, const Value& b) { return equal_at(a, b, 0); }

static bool equal_at(const Value& a, const Value& b, int depth) {
    check_depth(depth);
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_number() == b.as_number();
        auto ai = a.is_bool() ? int64_t{a.as_bool()} : a.as_int();
        auto bi = b.is_bool() ? int64_t{b.as_bool()} : b.as_int();
        return ai == bi;
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case Value::Kind::Undefined:
        case Value::Kind::None: return true;
        case Value::Kind::String: return a.as_string() == b.as_string();
        case Value::Kind::List: {
            const Array &x = a.as_array(), &y = b.as_array();
            if (x.size() != y.size()) return false;
            for (size_t i = 0; i < x.size(); ++i)
                if (!equal_at(x[i], y[i], depth + 1)) return false;
            return true;
        }
        case Value::Kind::Dict: {
            const Object &x = a.as_object(), &y = b.as_object();
            if (x.entries.size() != y.entries.size()) return false;
            for (const auto& [k, v] : x.entries) {
                const Value* w = y.find(k);
                if (!w || !equal_at(v, *w, depth + 1)) return false;
            }
            return true;
        }
        case Value::Kind::Function: return &a.as_callable() == &b.as_callable();
        default: return false;
    }
}

static int compare_at(const Value& a, const Value& b, int depth);

int compare_values(const Value& a, const Value& b) { return compare_at(a, b, 0); }

static int compare_at(const Value& a, const Value& b, int depth) {
    check_depth(depth);
    if (a.is_number() && b.is_number()) {
        double x = a.as_number(), y = b.as_number();
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.is_string() && b.is_string()) {
        int c = a.as_string().compare(b.as_string());
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    if (a.is_array() && b.is_array()) {
        const Array &x = a.as_array(), &y = b.as_array();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i)
            if (int c = compare_at(x[i], y[i], depth + 1)) return c;
        return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
    }
    throw RuntimeError("cannot compare " + a.type_name() + " with " + b.type_name());
}

std::vector<size_t> codepoint_offsets(std::string_view s) {
    std::vector<size_t> offs;
    offs.reserve(s.size() + 1);
    for (size_t i = 0; i < s.size(); ++i)
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) offs.push_back(i);
    offs.push_back(s.size());
    return offs;
}

size_t codepoint_count(std::string_view s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

}  // namespace pocket::jinja
