// Metadata values: type names, scalar conversions and the typed accessors of GgufFile.
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"

#include <cstring>
#include <limits>
#include <string>

namespace pocket {

std::string_view gguf_type_name(GgufType t) {
    switch (t) {
        case GgufType::U8: return "u8";
        case GgufType::I8: return "i8";
        case GgufType::U16: return "u16";
        case GgufType::I16: return "i16";
        case GgufType::U32: return "u32";
        case GgufType::I32: return "i32";
        case GgufType::F32: return "f32";
        case GgufType::BOOL: return "bool";
        case GgufType::STRING: return "string";
        case GgufType::ARRAY: return "array";
        case GgufType::U64: return "u64";
        case GgufType::I64: return "i64";
        case GgufType::F64: return "f64";
    }
    return "unknown";
}

size_t gguf_scalar_size(GgufType t) {
    switch (t) {
        case GgufType::U8: case GgufType::I8: case GgufType::BOOL: return 1;
        case GgufType::U16: case GgufType::I16: return 2;
        case GgufType::U32: case GgufType::I32: case GgufType::F32: return 4;
        case GgufType::U64: case GgufType::I64: case GgufType::F64: return 8;
        case GgufType::STRING: case GgufType::ARRAY: return 0;
    }
    return 0;
}

bool GgufValue::is_integer() const {
    switch (type) {
        case GgufType::U8: case GgufType::I8: case GgufType::U16: case GgufType::I16:
        case GgufType::U32: case GgufType::I32: case GgufType::U64: case GgufType::I64: return true;
        default: return false;
    }
}

bool GgufValue::is_float() const { return type == GgufType::F32 || type == GgufType::F64; }

std::optional<int64_t> GgufValue::as_int() const {
    switch (type) {
        case GgufType::U8: return static_cast<uint8_t>(scalar_);
        case GgufType::I8: return static_cast<int8_t>(scalar_);
        case GgufType::U16: return static_cast<uint16_t>(scalar_);
        case GgufType::I16: return static_cast<int16_t>(scalar_);
        case GgufType::U32: return static_cast<uint32_t>(scalar_);
        case GgufType::I32: return static_cast<int32_t>(scalar_);
        case GgufType::I64: return static_cast<int64_t>(scalar_);
        case GgufType::BOOL: return scalar_ != 0;
        case GgufType::U64:
            if (scalar_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
            return static_cast<int64_t>(scalar_);
        default: return std::nullopt;
    }
}

std::optional<uint64_t> GgufValue::as_uint() const {
    if (type == GgufType::U64) return scalar_;
    auto i = as_int();
    if (!i || *i < 0) return std::nullopt;
    return static_cast<uint64_t>(*i);
}

std::optional<double> GgufValue::as_float() const {
    if (type == GgufType::F32) {
        float f;
        const uint32_t bits = static_cast<uint32_t>(scalar_);
        std::memcpy(&f, &bits, 4);
        return f;
    }
    if (type == GgufType::F64) {
        double d;
        std::memcpy(&d, &scalar_, 8);
        return d;
    }
    return std::nullopt;
}

std::string_view GgufValue::as_string() const { return type == GgufType::STRING ? string_ : std::string_view{}; }

template <class T> std::optional<T> gguf_value_as(const GgufValue& v) {
    if constexpr (std::is_same_v<T, bool>) {
        if (v.type != GgufType::BOOL) return std::nullopt;
        return v.as_int().value() != 0;
    } else if constexpr (std::is_integral_v<T>) {
        if (!v.is_integer()) return std::nullopt;
        if constexpr (std::is_signed_v<T>) {
            auto i = v.as_int();
            if (!i || *i < std::numeric_limits<T>::min() || *i > std::numeric_limits<T>::max()) return std::nullopt;
            return static_cast<T>(*i);
        } else {
            auto u = v.as_uint();
            if (!u || *u > std::numeric_limits<T>::max()) return std::nullopt;
            return static_cast<T>(*u);
        }
    } else if constexpr (std::is_floating_point_v<T>) {
        auto f = v.as_float();
        if (!f) return std::nullopt;
        return static_cast<T>(*f);
    } else if constexpr (std::is_same_v<T, std::string_view>) {
        if (v.type != GgufType::STRING) return std::nullopt;
        return v.as_string();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (v.type != GgufType::STRING) return std::nullopt;
        return std::string(v.as_string());
    } else {
        static_assert(sizeof(T) == 0, "unsupported metadata type");
    }
}

namespace {
template <class T> constexpr std::string_view wanted_name() {
    if constexpr (std::is_same_v<T, bool>) return "bool";
    else if constexpr (std::is_integral_v<T>) return std::is_signed_v<T> ? "a signed integer in range" : "an unsigned integer in range";
    else if constexpr (std::is_floating_point_v<T>) return "f32 or f64";
    else return "string";
}
}  // namespace

template <class T> std::optional<T> GgufFile::find_as(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) return std::nullopt;
    auto r = gguf_value_as<T>(*v);
    if (!r) throw Error("{}: metadata key '{}' has type {}, expected {}", path_, key, gguf_type_name(v->type), wanted_name<T>());
    return r;
}

template <class T> T GgufFile::get(std::string_view key) const {
    auto r = find_as<T>(key);
    if (!r) throw Error("{}: missing metadata key '{}'", path_, key);
    return *r;
}

template <class E> std::span<const E> GgufFile::get_array(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) throw Error("{}: missing metadata key '{}'", path_, key);
    if (v->type != GgufType::ARRAY || v->elem_type != gguf_type_of<E>())
        throw Error("{}: metadata key '{}' is not an array of {}", path_, key, gguf_type_name(gguf_type_of<E>()));
    return v->array<E>();
}

std::span<const std::string_view> GgufFile::get_strings(std::string_view key) const {
    const GgufValue* v = find(key);
    if (!v) throw Error("{}: missing metadata key '{}'", path_, key);
    if (v->type != GgufType::ARRAY || v->elem_type != GgufType::STRING)
        throw Error("{}: metadata key '{}' is not an array of strings", path_, key);
    return v->strings();
}

#define POCKET_INSTANTIATE_SCALAR(T)                                              \
    template std::optional<T> gguf_value_as<T>(const GgufValue&);                 \
    template std::optional<T> GgufFile::find_as<T>(std::string_view) const;       \
    template T GgufFile::get<T>(std::string_view) const;
POCKET_INSTANTIATE_SCALAR(uint8_t)
POCKET_INSTANTIATE_SCALAR(int8_t)
POCKET_INSTANTIATE_SCALAR(uint16_t)
POCKET_INSTANTIATE_SCALAR(int16_t)
POCKET_INSTANTIATE_SCALAR(uint32_t)
POCKET_INSTANTIATE_SCALAR(int32_t)
POCKET_INSTANTIATE_SCALAR(uint64_t)
POCKET_INSTANTIATE_SCALAR(int64_t)
POCKET_INSTANTIATE_SCALAR(float)
POCKET_INSTANTIATE_SCALAR(double)
POCKET_INSTANTIATE_SCALAR(bool)
POCKET_INSTANTIATE_SCALAR(std::string_view)
POCKET_INSTANTIATE_SCALAR(std::string)
#undef POCKET_INSTANTIATE_SCALAR

#define POCKET_INSTANTIATE_ARRAY(E) template std::span<const E> GgufFile::get_array<E>(std::string_view) const;
POCKET_INSTANTIATE_ARRAY(uint8_t)
POCKET_INSTANTIATE_ARRAY(int8_t)
POCKET_INSTANTIATE_ARRAY(uint16_t)
POCKET_INSTANTIATE_ARRAY(int16_t)
POCKET_INSTANTIATE_ARRAY(uint32_t)
POCKET_INSTANTIATE_ARRAY(int32_t)
POCKET_INSTANTIATE_ARRAY(uint64_t)
POCKET_INSTANTIATE_ARRAY(int64_t)
POCKET_INSTANTIATE_ARRAY(float)
POCKET_INSTANTIATE_ARRAY(double)
POCKET_INSTANTIATE_ARRAY(bool)
#undef POCKET_INSTANTIATE_ARRAY

}  // namespace pocket
