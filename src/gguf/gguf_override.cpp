// llama.cpp's --override-kv: a metadata value replaced from the command line before the model
// reads it (a wrong context length, a missing add_bos flag), with llama.cpp's syntax
// KEY=TYPE:VALUE so that users' command lines carry over.
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

namespace pocket {

GgufValue GgufValue::scalar(GgufType type, uint64_t bits) {
    GgufValue v;
    v.type = type;
    v.scalar_ = bits;
    return v;
}

GgufValue GgufValue::string(std::string_view text) {
    GgufValue v;
    v.type = GgufType::STRING;
    v.string_ = text;
    return v;
}

namespace {

[[noreturn]] void bad(std::string_view spec, std::string_view why) {
    throw Error("--override-kv {}: {} (the form is KEY=TYPE:VALUE, TYPE one of int, float, bool, str)", spec, why);
}

// The whole text as a number of type T, or nullopt.
template <class T> std::optional<T> parse_number(std::string_view text) {
    T value{};
    const char* end = text.data() + text.size();
    const auto [p, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || p != end || text.empty()) return std::nullopt;
    return value;
}

}  // namespace

void GgufFile::override_kv(std::string_view spec) {
    const size_t eq = spec.find('=');
    if (eq == std::string_view::npos) bad(spec, "no =TYPE:VALUE after the key");
    if (eq == 0) bad(spec, "no key before =");
    const std::string_view key = spec.substr(0, eq);
    const std::string_view rest = spec.substr(eq + 1);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos) bad(spec, "no TYPE: before the value");
    const std::string_view type = rest.substr(0, colon);
    const std::string_view text = rest.substr(colon + 1);

    GgufValue value;
    if (type == "int") {
        const auto i = parse_number<int64_t>(text);
        if (!i) bad(spec, "the value is not an integer");
        value = GgufValue::scalar(GgufType::I64, static_cast<uint64_t>(*i));
    } else if (type == "float") {
        const auto d = parse_number<double>(text);
        if (!d || !std::isfinite(*d)) bad(spec, "the value is not a finite number");
        uint64_t bits;
        std::memcpy(&bits, &*d, sizeof bits);
        value = GgufValue::scalar(GgufType::F64, bits);
    } else if (type == "bool") {
        if (text != "true" && text != "false") bad(spec, "a bool is true or false");
        value = GgufValue::scalar(GgufType::BOOL, text == "true" ? 1 : 0);
    } else if (type == "str") {
        // llama.cpp keeps override strings in 128 bytes with the terminator.
        if (text.size() > 127) bad(spec, "a string value is at most 127 bytes");
        overrides_.push_back(std::make_unique<std::string>(text));
        value = GgufValue::string(*overrides_.back());
    } else {
        bad(spec, "unknown TYPE '" + std::string(type) + "'");
    }

    auto it = std::find_if(kv_.begin(), kv_.end(), [&](const GgufKeyValue& kv) { return kv.key == key; });
    if (it == kv_.end()) {
        overrides_.push_back(std::make_unique<std::string>(key));
        kv_.push_back({*overrides_.back(), std::move(value)});
    } else {
        it->value = std::move(value);
    }
}

}  // namespace pocket
