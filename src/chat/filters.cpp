// Jinja filters (`x | trim`, `tools | tojson(indent=4)`, `messages | selectattr('role', 'equalto',
// 'user') | list`). tojson follows HF transformers, not Jinja: non-ASCII kept, keys unsorted,
// no HTML escaping.
#include "chat/builtins.hpp"
#include "chat/string_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace pocket::jinja {
namespace {

// `attribute='a.b.0'`: a dotted path of keys (or list indices).
Value lookup_path(const Value& v, const std::string& path) {
    Value cur = v;
    size_t pos = 0;
    while (pos <= path.size()) {
        size_t dot = path.find('.', pos);
        std::string part = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
        bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
        cur = numeric && cur.is_array() ? get_item(cur, Value(static_cast<int64_t>(std::stoll(part)))) : get_attr(cur, part);
        if (dot == std::string::npos) break;
        pos = dot + 1;
    }
    return cur;
}

// Arguments after the first `skip` positional ones, for select/selectattr's test arguments.
CallArgs rest_args(const CallArgs& args, size_t skip) {
    CallArgs out;
    for (size_t i = skip; i < args.positional.size(); ++i) out.positional.push_back(args.positional[i]);
    return out;
}

int64_t int_or(const Value& v, int64_t dflt) {
    if (v.is_int()) return v.as_int();
    if (v.is_bool()) return v.as_bool();
    return dflt;
}

std::string html_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

Value to_int(const Value& v, const Value& dflt_v) {
    int64_t dflt = int_or(dflt_v, 0);
    switch (v.kind()) {
        case Value::Kind::Int: return v;
        case Value::Kind::Bool: return Value(int64_t{v.as_bool()});
        case Value::Kind::Float:
            if (!std::isfinite(v.as_float())) return Value(dflt);
            return Value(static_cast<int64_t>(v.as_float()));
        case Value::Kind::String: {
            std::string s = strip_chars(v.as_string(), Value(), true, true);
            char* end = nullptr;
            errno = 0;
            long long i = std::strtoll(s.c_str(), &end, 10);
            if (!s.empty() && *end == '\0' && errno == 0) return Value(static_cast<int64_t>(i));
            double d = std::strtod(s.c_str(), &end);  // Jinja's int filter accepts "3.5" too
            if (!s.empty() && *end == '\0' && std::isfinite(d)) return Value(static_cast<int64_t>(d));
            return Value(dflt);
        }
        default: return Value(dflt);
    }
}

Value to_float(const Value& v, const Value& dflt_v) {
    double dflt = dflt_v.is_number() ? dflt_v.as_number() : 0.0;
    if (v.is_number()) return Value(v.as_number());
    if (v.is_string()) {
        std::string s = strip_chars(v.as_string(), Value(), true, true);
        char* end = nullptr;
        double d = std::strtod(s.c_str(), &end);
        if (!s.empty() && *end == '\0') return Value(d);
    }
    return Value(dflt);
}

Value select_items(const Value& in, const CallArgs& args, bool by_attr, bool keep) {
    Array out;
    std::string attr = by_attr ? args.get(0, "attribute").to_str() : "";
    size_t test_pos = by_attr ? 1 : 0;
    const Value& test = args.get(test_pos, "test");
    CallArgs test_args = rest_args(args, test_pos + 1);
    for (const auto& item : iterate(in)) {
        Value v = by_attr ? lookup_path(item, attr) : item;
        bool ok = test.is_undefined() ? v.truthy() : apply_test(test.to_str(), v, test_args);
        if (ok == keep) out.push_back(item);
    }
    return Value(std::move(out));
}

Value map_items(const Value& in, const CallArgs& args) {
    Array out;
    if (const Value* attr = args.find_keyword("attribute")) {
        const Value* dflt = args.find_keyword("default");
        for (const auto& item : iterate(in)) {
            Value v = lookup_path(item, attr->to_str());
            out.push_back(v.is_undefined() && dflt ? *dflt : v);
        }
        return Value(std::move(out));
    }
    if (args.positional.empty()) throw RuntimeError("map needs a filter name or attribute=");
    std::string filter = args.positional[0].to_str();
    CallArgs fargs = rest_args(args, 1);
    fargs.keyword = args.keyword;
    for (const auto& item : iterate(in)) out.push_back(apply_filter(filter, item, fargs));
    return Value(std::move(out));
}

Value sort_items(const Value& in, const CallArgs& args) {
    Array items = iterate(in);
    bool reverse = args.get(0, "reverse").truthy();
    bool case_sensitive = args.get(1, "case_sensitive").truthy();
    const Value& attr = args.get(2, "attribute");
    auto key = [&](const Value& v) {
        Value k = attr.is_undefined() || attr.is_none() ? v : lookup_path(v, attr.to_str());
        if (!case_sensitive && k.is_string()) return Value(ascii_lower(k.as_string()));
        return k;
    };
    std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
        int c = compare_values(key(a), key(b));
        return reverse ? c > 0 : c < 0;
    });
    return Value(std::move(items));
}

Value indent_text(const std::string& s, const CallArgs& args) {
    const Value& w = args.get(0, "width");
    std::string pad = w.is_string() ? w.as_string() : std::string(static_cast<size_t>(std::max<int64_t>(0, int_or(w, 4))), ' ');
    bool first = args.get(1, "first").truthy();
    bool blank = args.get(2, "blank").truthy();
    std::string out;
    size_t pos = 0;
    bool is_first = true;
    while (pos <= s.size()) {
        size_t nl = s.find('\n', pos);
        std::string line = s.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        if ((is_first ? first : true) && (blank || !line.empty())) out += pad;
        out += line;
        if (nl == std::string::npos) break;
        out += '\n';
        pos = nl + 1;
        is_first = false;
    }
    return Value(std::move(out));
}

Value min_max(const Value& in, const CallArgs& args, bool want_max) {
    Array items = iterate(in);
    if (items.empty()) return Value();
    const Value& attr = args.get(1, "attribute");
    auto key = [&](const Value& v) { return attr.is_undefined() ? v : lookup_path(v, attr.to_str()); };
    Value best = items[0];
    for (const auto& v : items) {
        int c = compare_values(key(v), key(best));
        if (want_max ? c > 0 : c < 0) best = v;
    }
    return best;
}

}  // namespace

Value apply_filter(const std::string& name, const Value& in, const CallArgs& args) {
    if (name == "trim") {
        if (!in.is_string()) return Value(strip_chars(in.to_str(), args.get(0, "chars"), true, true));
        return Value(strip_chars(in.as_string(), args.get(0, "chars"), true, true));
    }
    if (name == "tojson") {
        const Value& indent = args.get(0, "indent");
        return Value(in.to_json(indent.is_int() ? static_cast<int>(std::clamp<int64_t>(indent.as_int(), 0, 64)) : -1));
    }
    if (name == "length" || name == "count") {
        if (in.is_string()) return Value(static_cast<int64_t>(codepoint_count(in.as_string())));
        if (in.is_array()) return Value(static_cast<int64_t>(in.as_array().size()));
        if (in.is_object()) return Value(static_cast<int64_t>(in.as_object().entries.size()));
        if (in.is_undefined()) return Value(int64_t{0});
        throw RuntimeError("object of type '" + in.type_name() + "' has no len()");
    }
    if (name == "upper") return Value(ascii_upper(in.to_str()));
    if (name == "lower") return Value(ascii_lower(in.to_str()));
    if (name == "capitalize") return Value(ascii_capitalize(in.to_str()));
    if (name == "title") return Value(ascii_title(in.to_str()));
    if (name == "replace") {
        const Value& count = args.get(2, "count");
        return Value(replace_all(in.to_str(), args.get(0, "old").to_str(), args.get(1, "new").to_str(),
                                 count.is_int() ? count.as_int() : -1));
    }
    if (name == "join") {
        std::string sep = args.get(0, "d").to_str();
        const Value& attr = args.get(1, "attribute");
        std::string out;
        bool first = true;
        for (const auto& v : iterate(in)) {
            if (!first) out += sep;
            first = false;
            out += (attr.is_undefined() ? v : lookup_path(v, attr.to_str())).to_str();
        }
        return Value(std::move(out));
    }
    if (name == "first" || name == "last") {
        Array items = iterate(in);
        if (items.empty()) return Value();
        return name == "first" ? items.front() : items.back();
    }
    if (name == "default" || name == "d") {
        bool boolean = args.get(1, "boolean").truthy();
        if (in.is_undefined() || (boolean && !in.truthy())) {
            const Value& d = args.get(0, "default_value");
            return d.is_undefined() ? Value("") : d;
        }
        return in;
    }
    if (name == "list") return Value(iterate(in));
    if (name == "string") return Value(in.to_str());
    if (name == "int") return to_int(in, args.get(0, "default"));
    if (name == "float") return to_float(in, args.get(0, "default"));
    if (name == "abs") {
        if (in.is_float()) return Value(std::fabs(in.as_float()));
        if (in.is_int()) return Value(in.as_int() < 0 ? -in.as_int() : in.as_int());
        throw RuntimeError("abs needs a number");
    }
    if (name == "round") {
        int64_t precision = int_or(args.get(0, "precision"), 0);
        std::string method = args.get(1, "method").is_string() ? args.get(1, "method").as_string() : "common";
        double scale = std::pow(10.0, static_cast<double>(precision));
        double x = in.as_number() * scale;
        x = method == "floor" ? std::floor(x) : method == "ceil" ? std::ceil(x) : std::round(x);
        return Value(x / scale);
    }
    if (name == "items") {
        if (in.is_undefined()) return Value(Array{});
        if (!in.is_object()) throw RuntimeError("items filter needs a mapping");
        Array out;
        for (const auto& [k, v] : in.as_object().entries) out.emplace_back(Array{Value(k), v});
        return Value(std::move(out));
    }
    if (name == "dictsort") {
        if (!in.is_object()) throw RuntimeError("dictsort needs a mapping");
        Array out;
        for (const auto& [k, v] : in.as_object().entries) out.emplace_back(Array{Value(k), v});
        std::stable_sort(out.begin(), out.end(), [](const Value& a, const Value& b) {
            return ascii_lower(a.as_array()[0].as_string()) < ascii_lower(b.as_array()[0].as_string());
        });
        return Value(std::move(out));
    }
    if (name == "selectattr") return select_items(in, args, true, true);
    if (name == "rejectattr") return select_items(in, args, true, false);
    if (name == "select") return select_items(in, args, false, true);
    if (name == "reject") return select_items(in, args, false, false);
    if (name == "map") return map_items(in, args);
    if (name == "sort") return sort_items(in, args);
    if (name == "reverse") {
        if (in.is_string()) {
            Array chars = iterate(in);
            std::string out;
            for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += it->as_string();
            return Value(std::move(out));
        }
        Array items = iterate(in);
        std::reverse(items.begin(), items.end());
        return Value(std::move(items));
    }
    if (name == "unique") {
        Array out;
        for (const auto& v : iterate(in))
            if (std::none_of(out.begin(), out.end(), [&](const Value& o) { return values_equal(o, v); })) out.push_back(v);
        return Value(std::move(out));
    }
    if (name == "min") return min_max(in, args, false);
    if (name == "max") return min_max(in, args, true);
    if (name == "sum") {
        const Value& attr = args.get(0, "attribute");
        Value total = args.get(1, "start").is_undefined() ? Value(int64_t{0}) : args.get(1, "start");
        for (const auto& v : iterate(in)) {
            Value x = attr.is_undefined() ? v : lookup_path(v, attr.to_str());
            if (!x.is_number() || !total.is_number()) throw RuntimeError("sum needs numbers");
            total = (total.is_float() || x.is_float()) ? Value(total.as_number() + x.as_number())
                                                       : Value(int_or(total, 0) + int_or(x, 0));
        }
        return total;
    }
    if (name == "indent") return indent_text(in.to_str(), args);
    if (name == "wordcount") return Value(static_cast<int64_t>(split_string(in.to_str(), Value(), -1).size()));
    if (name == "safe") return in;
    if (name == "escape" || name == "e" || name == "forceescape") return Value(html_escape(in.to_str()));
    throw RuntimeError("unknown filter '" + name + "'");
}

}  // namespace pocket::jinja
