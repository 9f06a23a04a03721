// The targets of `quantize IN OUT TYPE`: llama.cpp's type names and llama_ftype ids (the ids
// are what general.file_type holds, so they must be llama.cpp's exactly).
#include "pocket/quantize.hpp"

#include <cctype>
#include <charconv>

namespace pocket {
namespace {

constexpr QuantFileType kFileTypes[] = {
    {"Q4_0", 2, GgmlType::Q4_0},
    {"Q4_1", 3, GgmlType::Q4_1},
    {"Q5_0", 8, GgmlType::Q5_0},
    {"Q5_1", 9, GgmlType::Q5_1},
    {"Q2_K", 10, GgmlType::Q2_K},
    {"Q2_K_S", 21, GgmlType::Q2_K},
    {"Q3_K_S", 11, GgmlType::Q3_K},
    {"Q3_K_M", 12, GgmlType::Q3_K},
    {"Q3_K_L", 13, GgmlType::Q3_K},
    {"IQ2_XXS", 19, GgmlType::IQ2_XXS},
    {"IQ2_XS", 20, GgmlType::IQ2_XS},
    {"IQ2_S", 28, GgmlType::IQ2_XS},  // llama.cpp's names: the IQ2_S mix is mostly IQ2_XS,
    {"IQ2_M", 29, GgmlType::IQ2_S},   // and IQ2_M the one made of ggml's IQ2_S
    {"IQ3_XXS", 23, GgmlType::IQ3_XXS},
    {"IQ3_XS", 22, GgmlType::IQ3_S},
    {"IQ3_S", 26, GgmlType::IQ3_S},
    {"IQ3_M", 27, GgmlType::IQ3_S},
    {"IQ1_S", 24, GgmlType::IQ1_S},
    {"IQ1_M", 31, GgmlType::IQ1_M},
    {"TQ1_0", 36, GgmlType::TQ1_0},
    {"TQ2_0", 37, GgmlType::TQ2_0},
    {"MXFP4_MOE", 38, GgmlType::MXFP4},
    {"IQ4_NL", 25, GgmlType::IQ4_NL},
    {"IQ4_XS", 30, GgmlType::IQ4_XS},
    {"Q4_K_S", 14, GgmlType::Q4_K},
    {"Q4_K_M", 15, GgmlType::Q4_K},
    {"Q5_K_S", 16, GgmlType::Q5_K},
    {"Q5_K_M", 17, GgmlType::Q5_K},
    {"Q6_K", 18, GgmlType::Q6_K},
    {"Q8_0", 7, GgmlType::Q8_0},
    {"F16", 1, GgmlType::F16},
    {"BF16", 32, GgmlType::BF16},
    {"F32", 0, GgmlType::F32},
    // COPY shares F32's id; the id written is the input's own file type (see quantize_plan.cpp).
    {"COPY", 0, GgmlType::F32, true},
};

// llama-quantize's short names for the medium mixes.
struct Alias {
    std::string_view alias, name;
};
constexpr Alias kAliases[] = {{"Q3_K", "Q3_K_M"}, {"Q4_K", "Q4_K_M"}, {"Q5_K", "Q5_K_M"}};

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

const QuantFileType* by_name(std::string_view name) {
    for (const auto& t : kFileTypes)
        if (iequals(t.name, name)) return &t;
    return nullptr;
}

}  // namespace

std::span<const QuantFileType> quant_file_types() { return kFileTypes; }

const QuantFileType* find_quant_file_type(std::string_view name) {
    if (const auto* t = by_name(name)) return t;
    for (const auto& a : kAliases)
        if (iequals(a.alias, name)) return by_name(a.name);
    // A number is a llama_ftype id; the first row with it wins, so 0 is F32, not COPY.
    uint32_t id = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (ec == std::errc() && end == name.data() + name.size() && !name.empty())
        for (const auto& t : kFileTypes)
            if (t.id == id) return &t;
    return nullptr;
}

}  // namespace pocket
