#include "gguf_commands.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>

namespace pocket::tools {
namespace {

using nlohmann::ordered_json;

// Length of the valid UTF-8 sequence at s[i] (0: none), overlong forms and surrogates refused.
size_t utf8_length(std::string_view s, size_t i) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = b(i);
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k)
        if ((b(i + k) & 0xC0) != 0x80) return 0;
    if (n == 3 && ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) > 0x9F))) return 0;
    if (n == 4 && ((c == 0xF0 && b(i + 1) < 0x90) || (c == 0xF4 && b(i + 1) > 0x8F))) return 0;
    return n;
}

// A key or name as the terminal should show it: bytes that are not UTF-8, and control
// characters, as \xHH (a hostile file cannot move the cursor or break the table).
std::string printable(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const size_t n = utf8_length(s, i);
        const auto c = static_cast<unsigned char>(s[i]);
        if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
            out += fmt::format("\\x{:02X}", c);
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

ordered_json scalar_json(const GgufValue& v) {
    switch (v.type) {
        case GgufType::BOOL: return *v.as_int() != 0;
        case GgufType::F32: case GgufType::F64: return *v.as_float();
        case GgufType::U64: return *v.as_uint();
        case GgufType::STRING: return std::string(v.as_string());
        default: return *v.as_int();
    }
}

template <class E> ordered_json numbers(const GgufValue& v) {
    ordered_json a = ordered_json::array();
    for (E x : v.array<E>()) {
        if constexpr (std::is_same_v<E, bool>) a.push_back(static_cast<bool>(x));
        else a.push_back(x);
    }
    return a;
}

ordered_json array_values(const GgufValue& v) {
    switch (v.elem_type) {
        case GgufType::U8: return numbers<uint8_t>(v);
        case GgufType::I8: return numbers<int8_t>(v);
        case GgufType::U16: return numbers<uint16_t>(v);
        case GgufType::I16: return numbers<int16_t>(v);
        case GgufType::U32: return numbers<uint32_t>(v);
        case GgufType::I32: return numbers<int32_t>(v);
        case GgufType::U64: return numbers<uint64_t>(v);
        case GgufType::I64: return numbers<int64_t>(v);
        case GgufType::F32: return numbers<float>(v);
        case GgufType::F64: return numbers<double>(v);
        case GgufType::BOOL: return numbers<bool>(v);
        case GgufType::STRING: {
            ordered_json a = ordered_json::array();
            for (auto s : v.strings()) a.push_back(std::string(s));
            return a;
        }
        case GgufType::ARRAY: {
            ordered_json a = ordered_json::array();
            for (const auto& item : v.items()) a.push_back(array_values(item));
            return a;
        }
    }
    return nullptr;
}

ordered_json value_json(const GgufValue& v) {
    ordered_json j;
    if (v.type == GgufType::ARRAY) {
        j["type"] = "array";
        j["elem_type"] = gguf_type_name(v.elem_type);
        j["count"] = v.count();
        j["value"] = array_values(v);
    } else {
        j["type"] = gguf_type_name(v.type);
        j["value"] = scalar_json(v);
    }
    return j;
}

std::string shape_text(const GgufTensorInfo& t) {
    std::string s;
    for (uint32_t d = 0; d < std::max<uint32_t>(t.n_dims, 1); ++d) s += fmt::format("{}{}", d ? " x " : "", t.ne[d]);
    return s;
}

// One line per value; long arrays show their first elements and a count.
std::string value_text(const GgufValue& v, size_t preview) {
    if (v.type != GgufType::ARRAY) {
        if (v.type == GgufType::STRING) return ordered_json(std::string(v.as_string())).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
        return scalar_json(v).dump();
    }
    ordered_json all = array_values(v);
    std::string s = fmt::format("[{} x {}] [", v.count(), gguf_type_name(v.elem_type));
    for (size_t i = 0; i < all.size() && i < preview; ++i)
        s += (i ? ", " : "") + all[i].dump(-1, ' ', false, ordered_json::error_handler_t::replace);
    if (all.size() > preview) s += ", ...";
    return s + "]";
}

}  // namespace

void gguf_info(const GgufFile& file, const InfoOptions& options, std::ostream& out) {
    if (options.json) {
        ordered_json j;
        j["file"] = std::filesystem::path(file.path()).filename().string();
        j["version"] = file.version();
        j["alignment"] = file.alignment();
        j["data_offset"] = file.data_offset();
        j["n_kv"] = file.metadata().size();
        j["n_tensors"] = file.tensors().size();
        ordered_json md = ordered_json::object();
        for (const auto& kv : file.metadata()) md[std::string(kv.key)] = value_json(kv.value);
        j["metadata"] = std::move(md);
        ordered_json ts = ordered_json::array();
        for (const auto& t : file.tensors()) {
            ordered_json shape = ordered_json::array();
            for (uint32_t d = 0; d < t.n_dims; ++d) shape.push_back(t.ne[d]);
            const auto& info = ggml_type_info(t.type);
            std::string tname(info.name);
            for (auto& c : tname) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            ts.push_back({{"name", std::string(t.name)}, {"type", tname}, {"type_id", static_cast<uint32_t>(t.type)},
                          {"shape", shape}, {"offset", t.offset}, {"n_bytes", t.n_bytes}});
        }
        j["tensors"] = std::move(ts);
        out << j.dump(1, ' ', false, ordered_json::error_handler_t::replace) << "\n";
        return;
    }
    out << fmt::format("file:        {}\n", file.path());
    out << fmt::format("version:     GGUF v{}\n", file.version());
    out << fmt::format("size:        {} bytes\n", file.file_size());
    out << fmt::format("alignment:   {}\n", file.alignment());
    out << fmt::format("data offset: {}\n", file.data_offset());
    out << fmt::format("\nmetadata ({} keys):\n", file.metadata().size());
    size_t width = 0;
    for (const auto& kv : file.metadata()) width = std::max(width, printable(kv.key).size());
    for (const auto& kv : file.metadata())
        out << fmt::format("  {:<{}}  {}\n", printable(kv.key), width, value_text(kv.value, options.array_preview));
    out << fmt::format("\ntensors ({}):\n", file.tensors().size());
    size_t name_w = 4;
    for (const auto& t : file.tensors()) name_w = std::max(name_w, printable(t.name).size());
    out << fmt::format("  {:<{}}  {:<7}  {:<22}  {:>12}  {:>12}\n", "name", name_w, "type", "shape", "offset", "bytes");
    uint64_t total = 0;
    for (const auto& t : file.tensors()) {
        out << fmt::format("  {:<{}}  {:<7}  {:<22}  {:>12}  {:>12}\n", printable(t.name), name_w, ggml_type_info(t.type).name,
                           shape_text(t), t.offset, t.n_bytes);
        total += t.n_bytes;
    }
    out << fmt::format("\n{} tensors, {} bytes of tensor data\n", file.tensors().size(), total);
}

}  // namespace pocket::tools
