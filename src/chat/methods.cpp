// Python methods of str, list and dict that chat templates call: `content.strip()`,
// `message.get('x')`, `ns.items.append(...)`. Case mapping is ASCII-only (non-ASCII bytes pass
// through unchanged); role names and markers are ASCII.
#include "chat/builtins.hpp"
#include "chat/string_ops.hpp"

#include <algorithm>

namespace pocket::jinja {

std::string ascii_upper(std::string s) {
    for (char& c : s)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
    return s;
}

std::string ascii_lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    return s;
}

static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string ascii_title(std::string s) {
    bool prev_letter = false;
    for (char& c : s) {
        if (is_alpha(c)) {
            c = prev_letter ? ascii_lower(std::string(1, c))[0] : ascii_upper(std::string(1, c))[0];
            prev_letter = true;
        } else {
            prev_letter = (static_cast<unsigned char>(c) & 0x80) != 0;  // inside a non-ASCII letter
        }
    }
    return s;
}

std::string ascii_capitalize(const std::string& s) {
    if (s.empty()) return s;
    return ascii_upper(s.substr(0, 1)) + ascii_lower(s.substr(1));
}

static const char* const kWhitespace = " \t\n\r\f\v";

std::string strip_chars(const std::string& s, const Value& chars, bool left, bool right) {
    std::string set = (chars.is_undefined() || chars.is_none()) ? kWhitespace : chars.to_str();
    size_t b = 0, e = s.size();
    if (left)
        while (b < e && set.find(s[b]) != std::string::npos) ++b;
    if (right)
        while (e > b && set.find(s[e - 1]) != std::string::npos) --e;
    return s.substr(b, e - b);
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to, int64_t count) {
    std::string out;
    if (from.empty()) {
        // Python inserts `to` between every character (and at both ends).
        auto offs = codepoint_offsets(s);
        int64_t done = 0;
        for (size_t i = 0; i + 1 < offs.size(); ++i) {
            if (count < 0 || done < count) { out += to; ++done; }
            out.append(s, offs[i], offs[i + 1] - offs[i]);
        }
        if (count < 0 || done < count) out += to;
        return out;
    }
    size_t pos = 0;
    int64_t done = 0;
    for (;;) {
        size_t hit = s.find(from, pos);
        if (hit == std::string::npos || (count >= 0 && done >= count)) break;
        out.append(s, pos, hit - pos);
        out += to;
        if (out.size() > kMaxOutputBytes) throw RuntimeError("string too long");
        pos = hit + from.size();
        ++done;
    }
    out.append(s, pos, std::string::npos);
    return out;
}

Array split_string(const std::string& s, const Value& sep, int64_t maxsplit) {
    Array out;
    if (sep.is_undefined() || sep.is_none()) {
        // Whitespace split: runs of whitespace separate, empty pieces are dropped.
        size_t i = 0;
        const std::string ws = kWhitespace;
        while (true) {
            while (i < s.size() && ws.find(s[i]) != std::string::npos) ++i;
            if (i >= s.size()) break;
            if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
                size_t e = s.size();
                while (e > i && ws.find(s[e - 1]) != std::string::npos) --e;
                out.emplace_back(s.substr(i, e - i));
                break;
            }
            size_t j = i;
            while (j < s.size() && ws.find(s[j]) == std::string::npos) ++j;
            out.emplace_back(s.substr(i, j - i));
            i = j;
        }
        return out;
    }
    std::string d = sep.to_str();
    if (d.empty()) throw RuntimeError("empty separator");
    size_t pos = 0;
    while (true) {
        size_t hit = s.find(d, pos);
        if (hit == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit)) break;
        out.emplace_back(s.substr(pos, hit - pos));
        pos = hit + d.size();
    }
    out.emplace_back(s.substr(pos));
    return out;
}

// str.format with `{}`, `{0}`, `{name}` and `{{`/`}}`; format specs after ':' are ignored.
static std::string format_string(const std::string& f, const CallArgs& args) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < f.size(); ++i) {
        char c = f[i];
        if (c == '{' && i + 1 < f.size() && f[i + 1] == '{') { out += '{'; ++i; continue; }
        if (c == '}' && i + 1 < f.size() && f[i + 1] == '}') { out += '}'; ++i; continue; }
        if (c != '{') { out += c; continue; }
        size_t close = f.find('}', i);
        if (close == std::string::npos) throw RuntimeError("format: single '{' encountered in format string");
        std::string field = f.substr(i + 1, close - i - 1);
        field = field.substr(0, field.find(':'));
        Value v;
        if (field.empty()) v = args.get(auto_index++, "");
        else if (std::all_of(field.begin(), field.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
            v = args.get(static_cast<size_t>(std::stoul(field)), "");
        else if (const Value* kw = args.find_keyword(field)) v = *kw;
        else throw RuntimeError("format: no argument '" + field + "'");
        out += v.to_str();
        i = close;
    }
    return out;
}

static int64_t int_arg(const Value& v, int64_t dflt) {
    if (v.is_undefined() || v.is_none()) return dflt;
    if (v.is_int()) return v.as_int();
    if (v.is_bool()) return v.as_bool();
    throw RuntimeError("expected an integer argument, got " + v.type_name());
}

static std::optional<Value> string_method(const std::string& s, const std::string& name, const CallArgs& args) {
    if (name == "strip") return Value(strip_chars(s, args.get(0, "chars"), true, true));
    if (name == "lstrip") return Value(strip_chars(s, args.get(0, "chars"), true, false));
    if (name == "rstrip") return Value(strip_chars(s, args.get(0, "chars"), false, true));
    if (name == "startswith" || name == "endswith") {
        const Value& p = args.get(0, "prefix");
        std::vector<Value> options = p.is_array() ? p.as_array() : std::vector<Value>{p};
        for (const auto& o : options) {
            if (!o.is_string()) throw RuntimeError(name + " needs a string argument");
            const std::string& t = o.as_string();
            bool hit = name == "startswith" ? s.compare(0, t.size(), t) == 0
                                            : s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
            if (hit) return Value(true);
        }
        return Value(false);
    }
    if (name == "split") return Value(split_string(s, args.get(0, "sep"), int_arg(args.get(1, "maxsplit"), -1)));
    if (name == "rsplit") {
        // Only the common no-maxsplit form differs from split in nothing but direction.
        if (int_arg(args.get(1, "maxsplit"), -1) >= 0) throw RuntimeError("rsplit with maxsplit is not supported");
        return Value(split_string(s, args.get(0, "sep"), -1));
    }
    if (name == "splitlines") {
        Array out;
        size_t pos = 0;
        while (pos < s.size()) {
            size_t nl = s.find('\n', pos);
            if (nl == std::string::npos) nl = s.size();
            std::string line = s.substr(pos, nl - pos);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            out.emplace_back(std::move(line));
            pos = nl + 1;
        }
        return Value(std::move(out));
    }
    if (name == "upper") return Value(ascii_upper(s));
    if (name == "lower") return Value(ascii_lower(s));
    if (name == "title") return Value(ascii_title(s));
    if (name == "capitalize") return Value(ascii_capitalize(s));
    if (name == "replace")
        return Value(replace_all(s, args.get(0, "old").to_str(), args.get(1, "new").to_str(), int_arg(args.get(2, "count"), -1)));
    if (name == "format") return Value(format_string(s, args));
    if (name == "find" || name == "rfind") {
        std::string t = args.get(0, "sub").to_str();
        size_t hit = name == "find" ? s.find(t) : s.rfind(t);
        if (hit == std::string::npos) return Value(int64_t{-1});
        return Value(static_cast<int64_t>(codepoint_count(std::string_view(s).substr(0, hit))));
    }
    if (name == "count") {
        std::string t = args.get(0, "sub").to_str();
        if (t.empty()) return Value(static_cast<int64_t>(codepoint_count(s) + 1));
        int64_t n = 0;
        for (size_t p = s.find(t); p != std::string::npos; p = s.find(t, p + t.size())) ++n;
        return Value(n);
    }
    if (name == "join") {
        std::string out;
        bool first = true;
        for (const auto& v : iterate(args.get(0, "iterable"))) {
            if (!first) out += s;
            first = false;
            out += v.to_str();
        }
        return Value(std::move(out));
    }
    auto all_of = [&](auto pred) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) { return pred(static_cast<unsigned char>(c)); });
    };
    if (name == "isdigit") return Value(all_of([](unsigned char c) { return c >= '0' && c <= '9'; }));
    if (name == "isalpha") return Value(all_of([](unsigned char c) { return is_alpha(static_cast<char>(c)); }));
    if (name == "isalnum") return Value(all_of([](unsigned char c) { return is_alpha(static_cast<char>(c)) || (c >= '0' && c <= '9'); }));
    if (name == "isspace") return Value(all_of([](unsigned char c) { return std::string(kWhitespace).find(static_cast<char>(c)) != std::string::npos; }));
    if (name == "isupper") return Value(s != ascii_lower(s) && s == ascii_upper(s));
    if (name == "islower") return Value(s != ascii_upper(s) && s == ascii_lower(s));
    return std::nullopt;
}

static std::optional<Value> list_method(Array& a, const std::string& name, const CallArgs& args) {
    if (name == "append") {
        if (a.size() >= kMaxSequence) throw RuntimeError("list too long");
        a.push_back(args.get(0, "object"));
        return Value(nullptr);
    }
    if (name == "extend") {
        for (const auto& v : iterate(args.get(0, "iterable"))) a.push_back(v);
        if (a.size() > kMaxSequence) throw RuntimeError("list too long");
        return Value(nullptr);
    }
    if (name == "insert") {
        auto n = static_cast<int64_t>(a.size());
        int64_t i = int_arg(args.get(0, "index"), 0);
        if (i < 0) i = std::max<int64_t>(0, i + n);
        i = std::min(i, n);
        a.insert(a.begin() + i, args.get(1, "object"));
        return Value(nullptr);
    }
    if (name == "pop") {
        if (a.empty()) throw RuntimeError("pop from empty list");
        auto n = static_cast<int64_t>(a.size());
        int64_t i = int_arg(args.get(0, "index"), -1);
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw RuntimeError("pop index out of range");
        Value v = a[static_cast<size_t>(i)];
        a.erase(a.begin() + i);
        return v;
    }
    if (name == "index") {
        for (size_t i = 0; i < a.size(); ++i)
            if (values_equal(a[i], args.get(0, "value"))) return Value(static_cast<int64_t>(i));
        throw RuntimeError("value is not in list");
    }
    if (name == "count") {
        int64_t n = 0;
        for (const auto& v : a) n += values_equal(v, args.get(0, "value"));
        return Value(n);
    }
    if (name == "reverse") {
        std::reverse(a.begin(), a.end());
        return Value(nullptr);
    }
    if (name == "copy") return Value(Array(a));
    return std::nullopt;
}

static std::optional<Value> dict_method(Object& o, const std::string& name, const CallArgs& args) {
    if (name == "get") {
        const Value& key = args.get(0, "key");
        const Value* v = key.is_string() ? o.find(key.as_string()) : nullptr;
        if (v) return *v;
        const Value& dflt = args.get(1, "default");
        return dflt.is_undefined() ? Value(nullptr) : dflt;
    }
    if (name == "items") {
        Array out;
        for (const auto& [k, v] : o.entries) out.emplace_back(Array{Value(k), v});
        return Value(std::move(out));
    }
    if (name == "keys") {
        Array out;
        for (const auto& [k, _] : o.entries) out.emplace_back(k);
        return Value(std::move(out));
    }
    if (name == "values") {
        Array out;
        for (const auto& [_, v] : o.entries) out.push_back(v);
        return Value(std::move(out));
    }
    if (name == "update") {
        const Value& other = args.get(0, "");
        if (other.is_object())
            for (const auto& [k, v] : other.as_object().entries) o.set(k, v);
        for (const auto& [k, v] : args.keyword) o.set(k, v);
        return Value(nullptr);
    }
    if (name == "pop") {
        std::string key = args.get(0, "key").to_str();
        if (const Value* v = o.find(key)) {
            Value out = *v;
            o.erase(key);
            return out;
        }
        const Value& dflt = args.get(1, "default");
        if (dflt.is_undefined()) throw RuntimeError("key '" + key + "' not found");
        return dflt;
    }
    if (name == "setdefault") {
        std::string key = args.get(0, "key").to_str();
        if (const Value* v = o.find(key)) return *v;
        Value dflt = args.get(1, "default");
        if (dflt.is_undefined()) dflt = Value(nullptr);
        o.set(key, dflt);
        return dflt;
    }
    if (name == "copy") {
        auto copy = std::make_shared<Object>(o);
        copy->is_namespace = false;
        return Value(std::move(copy));
    }
    return std::nullopt;
}

std::optional<Value> call_method(const Value& obj, const std::string& name, const CallArgs& args) {
    if (obj.is_string()) return string_method(obj.as_string(), name, args);
    if (obj.is_array()) return list_method(obj.as_array(), name, args);
    if (obj.is_object() && !obj.as_object().is_namespace) return dict_method(obj.as_object(), name, args);
    return std::nullopt;
}

}  // namespace pocket::jinja
