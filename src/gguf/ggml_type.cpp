#include "pocket/ggml_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace pocket {
namespace {

using T = GgmlType;
// id, name, block size, bytes per block, quantized.
// Byte counts follow ggml's block structs (see kernels/blocks.hpp for the layouts the
// kernels read; each carries a static_assert against this table's numbers).
constexpr std::array kTable{
    GgmlTypeInfo{T::F32, "f32", 1, 4, false},
    GgmlTypeInfo{T::F16, "f16", 1, 2, false},
    GgmlTypeInfo{T::Q4_0, "q4_0", 32, 18, true},
    GgmlTypeInfo{T::Q4_1, "q4_1", 32, 20, true},
    GgmlTypeInfo{T::Q5_0, "q5_0", 32, 22, true},
    GgmlTypeInfo{T::Q5_1, "q5_1", 32, 24, true},
    GgmlTypeInfo{T::Q8_0, "q8_0", 32, 34, true},
    GgmlTypeInfo{T::Q8_1, "q8_1", 32, 36, true},
    GgmlTypeInfo{T::Q2_K, "q2_K", 256, 84, true},
    GgmlTypeInfo{T::Q3_K, "q3_K", 256, 110, true},
    GgmlTypeInfo{T::Q4_K, "q4_K", 256, 144, true},
    GgmlTypeInfo{T::Q5_K, "q5_K", 256, 176, true},
    GgmlTypeInfo{T::Q6_K, "q6_K", 256, 210, true},
    GgmlTypeInfo{T::Q8_K, "q8_K", 256, 292, true},
    GgmlTypeInfo{T::IQ2_XXS, "iq2_xxs", 256, 66, true},
    GgmlTypeInfo{T::IQ2_XS, "iq2_xs", 256, 74, true},
    GgmlTypeInfo{T::IQ3_XXS, "iq3_xxs", 256, 98, true},
    GgmlTypeInfo{T::IQ1_S, "iq1_s", 256, 50, true},
    GgmlTypeInfo{T::IQ4_NL, "iq4_nl", 32, 18, true},
    GgmlTypeInfo{T::IQ3_S, "iq3_s", 256, 110, true},
    GgmlTypeInfo{T::IQ2_S, "iq2_s", 256, 82, true},
    GgmlTypeInfo{T::IQ4_XS, "iq4_xs", 256, 136, true},
    GgmlTypeInfo{T::I8, "i8", 1, 1, false},
    GgmlTypeInfo{T::I16, "i16", 1, 2, false},
    GgmlTypeInfo{T::I32, "i32", 1, 4, false},
    GgmlTypeInfo{T::I64, "i64", 1, 8, false},
    GgmlTypeInfo{T::F64, "f64", 1, 8, false},
    GgmlTypeInfo{T::IQ1_M, "iq1_m", 256, 56, true},
    GgmlTypeInfo{T::BF16, "bf16", 1, 2, false},
    GgmlTypeInfo{T::TQ1_0, "tq1_0", 256, 54, true},
    GgmlTypeInfo{T::TQ2_0, "tq2_0", 256, 66, true},
    GgmlTypeInfo{T::MXFP4, "mxfp4", 32, 17, true},
};

constexpr uint32_t kMaxId = 39;

constexpr std::array<int8_t, kMaxId + 1> make_index() {
    std::array<int8_t, kMaxId + 1> index{};
    for (auto& i : index) i = -1;
    for (size_t i = 0; i < kTable.size(); ++i) index[static_cast<uint32_t>(kTable[i].type)] = static_cast<int8_t>(i);
    return index;
}
constexpr auto kIndex = make_index();

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

}  // namespace

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
    if (id > kMaxId || kIndex[id] < 0) return nullptr;
    return &kTable[static_cast<size_t>(kIndex[id])];
}

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
    for (const auto& t : kTable)
        if (iequals(t.name, name)) return t.type;
    return std::nullopt;
}

std::optional<uint64_t> ggml_row_bytes(GgmlType t, uint64_t n) {
    const auto& info = ggml_type_info(t);
    if (n % info.block_size != 0) return std::nullopt;
    return n / info.block_size * info.block_bytes;
}

GgmlTypeTable ggml_type_table() { return {kTable.data(), kTable.data() + kTable.size()}; }

}  // namespace pocket
