#pragma once
// GGUF reader: an mmapped (or, with no_mmap, read-in) GGUF v2/v3 file, validated in full
// before anything is handed out. Strings are string_views into the file; arrays of numbers
// are spans. Every check failure throws pocket::Error with a one-line message naming the file.
#include "pocket/ggml_type.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace pocket {

enum class GgufType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, BOOL = 7,
    STRING = 8, ARRAY = 9, U64 = 10, I64 = 11, F64 = 12,
};
std::string_view gguf_type_name(GgufType t);  // "u8", "string", "array", ...
size_t gguf_scalar_size(GgufType t);          // 0 for STRING and ARRAY

// One metadata value. Scalars are held by value; strings view the file; arrays of
// numbers are copied once into aligned storage so that spans of them are well-formed.
class GgufValue {
public:
    GgufType type = GgufType::U8;

    // Scalars.
    bool is_integer() const;
    bool is_float() const;
    std::optional<int64_t> as_int() const;    // any integer or bool type, nullopt otherwise
    std::optional<uint64_t> as_uint() const;  // non-negative integers only
    std::optional<double> as_float() const;   // f32/f64
    std::string_view as_string() const;       // STRING only (else empty)

    // Arrays.
    GgufType elem_type = GgufType::U8;         // ARRAY only
    uint64_t count() const { return count_; }   // ARRAY only
    template <class E> std::span<const E> array() const;  // numeric arrays; empty on type mismatch
    std::span<const std::string_view> strings() const { return strings_; }
    std::span<const GgufValue> items() const { return items_; }  // arrays of arrays

    // A value made in memory, as llama.cpp's --override-kv gives them: a scalar from its bit
    // pattern (i64, f64 or bool), or a string viewing `text`, which must outlive the value.
    static GgufValue scalar(GgufType type, uint64_t bits);
    static GgufValue string(std::string_view text);

    // Raw little-endian storage of a scalar (8 bytes, zero-extended) or a numeric array.
    const void* raw() const { return type == GgufType::ARRAY ? static_cast<const void*>(array_.data()) : &scalar_; }

private:
    friend class GgufParser;
    uint64_t scalar_ = 0;             // bit pattern of the scalar, zero-extended
    std::string_view string_;
    uint64_t count_ = 0;
    std::vector<uint64_t> array_;     // numeric array bytes, 8-aligned
    std::vector<std::string_view> strings_;
    std::vector<GgufValue> items_;
};

template <class E> inline constexpr GgufType gguf_type_of() {
    if constexpr (std::is_same_v<E, uint8_t>) return GgufType::U8;
    else if constexpr (std::is_same_v<E, int8_t>) return GgufType::I8;
    else if constexpr (std::is_same_v<E, uint16_t>) return GgufType::U16;
    else if constexpr (std::is_same_v<E, int16_t>) return GgufType::I16;
    else if constexpr (std::is_same_v<E, uint32_t>) return GgufType::U32;
    else if constexpr (std::is_same_v<E, int32_t>) return GgufType::I32;
    else if constexpr (std::is_same_v<E, float>) return GgufType::F32;
    else if constexpr (std::is_same_v<E, bool>) return GgufType::BOOL;
    else if constexpr (std::is_same_v<E, uint64_t>) return GgufType::U64;
    else if constexpr (std::is_same_v<E, int64_t>) return GgufType::I64;
    else if constexpr (std::is_same_v<E, double>) return GgufType::F64;
    else static_assert(sizeof(E) == 0, "not a GGUF scalar type");
}

template <class E> std::span<const E> GgufValue::array() const {
    if (type != GgufType::ARRAY || elem_type != gguf_type_of<E>()) return {};
    return {reinterpret_cast<const E*>(array_.data()), static_cast<size_t>(count_)};
}

struct GgufKeyValue {
    std::string_view key;
    GgufValue value;
};

struct GgufTensorInfo {
    std::string_view name;
    uint32_t n_dims = 0;
    std::array<int64_t, 4> ne{1, 1, 1, 1};  // ggml order: ne[0] is the fastest-varying dim
    GgmlType type = GgmlType::F32;
    uint64_t offset = 0;                    // relative to the data section
    uint64_t n_bytes = 0;
    const uint8_t* data = nullptr;          // into the map (or the read-in buffer)
    int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

struct GgufOpenOptions {
    bool use_mmap = true;   // false: read the whole file into memory (--no-mmap)
    bool lock = false;      // mlock the mapping (--mlock)
};

class MappedFile;

class GgufFile {
public:
    // Opens and validates; throws pocket::Error naming the file on any problem.
    static GgufFile open(const std::string& path, const GgufOpenOptions& options = {});
    // Parses a copy of bytes already in memory; `name` stands in for the path in errors.
    static GgufFile from_memory(const void* data, size_t size, const std::string& name);

    GgufFile(GgufFile&&) noexcept;
    GgufFile& operator=(GgufFile&&) noexcept;
    ~GgufFile();

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t alignment() const { return alignment_; }
    uint64_t data_offset() const { return data_offset_; }
    uint64_t file_size() const { return file_size_; }
    const uint8_t* file_data() const;
    // Tells the system that these bytes of a mapped file will not be read again soon: their
    // pages leave this process's resident set (a later read maps them back from the file).
    // Nothing happens for a file read into memory (--no-mmap), whose bytes must stay.
    void release_pages(const void* data, size_t size) const;

    std::span<const GgufKeyValue> metadata() const { return kv_; }
    std::span<const GgufTensorInfo> tensors() const { return tensors_; }

    const GgufValue* find(std::string_view key) const;
    const GgufTensorInfo* find_tensor(std::string_view name) const;
    const GgufTensorInfo& tensor(std::string_view name) const;  // throws when missing

    // Typed accessors. get<T> throws when the key is missing or its value cannot be
    // represented as T; find_as<T> returns nullopt when missing (and throws on a bad type).
    // Integers convert between widths when the value fits; floats from f32/f64.
    template <class T> T get(std::string_view key) const;
    template <class T> std::optional<T> find_as(std::string_view key) const;
    template <class E> std::span<const E> get_array(std::string_view key) const;  // throws on type mismatch
    std::span<const std::string_view> get_strings(std::string_view key) const;

    // llama.cpp's --override-kv KEY=TYPE:VALUE, TYPE one of int, float, bool, str: the key
    // takes this value (added when the file lacks it). Throws pocket::Error quoting `spec`
    // when it is malformed.
    void override_kv(std::string_view spec);

private:
    GgufFile() = default;
    friend class GgufParser;
    std::string path_;
    std::unique_ptr<MappedFile> file_;
    uint32_t version_ = 0;
    uint64_t alignment_ = 32;
    uint64_t data_offset_ = 0;
    uint64_t file_size_ = 0;
    std::vector<GgufKeyValue> kv_;
    std::vector<GgufTensorInfo> tensors_;
    std::vector<std::unique_ptr<std::string>> overrides_;  // keys and strings of override_kv (stable addresses)
};

// Conversion used by get<T>: exposed for tools that print values.
template <class T> std::optional<T> gguf_value_as(const GgufValue& v);

}  // namespace pocket
