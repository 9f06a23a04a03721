#pragma once
// The ggml type table: the one place where a tensor type's geometry is declared.
// Ids, names, block sizes and bytes per block are those of ggml, so that GGUF files
// written by llama.cpp read here and files written here read there.
#include <cstdint>
#include <optional>
#include <string_view>

namespace pocket {

enum class GgmlType : uint32_t {
    F32 = 0, F16 = 1, Q4_0 = 2, Q4_1 = 3,
    // 4 and 5 were Q4_2 and Q4_3, removed from ggml long ago.
    Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q8_1 = 9,
    Q2_K = 10, Q3_K = 11, Q4_K = 12, Q5_K = 13, Q6_K = 14, Q8_K = 15,
    IQ2_XXS = 16, IQ2_XS = 17, IQ3_XXS = 18, IQ1_S = 19, IQ4_NL = 20,
    IQ3_S = 21, IQ2_S = 22, IQ4_XS = 23,
    I8 = 24, I16 = 25, I32 = 26, I64 = 27, F64 = 28,
    IQ1_M = 29, BF16 = 30,
    // 31..33 were the Q4_0_4_4 / 4_8 / 8_8 repacked types, removed from files.
    TQ1_0 = 34, TQ2_0 = 35,
    // 36..38 were IQ4_NL_4_4 / 4_8 / 8_8, removed likewise.
    MXFP4 = 39,
};

struct GgmlTypeInfo {
    GgmlType type;
    std::string_view name;   // as ggml_type_name() prints it, e.g. "q4_K"
    uint32_t block_size;     // elements per block
    uint32_t block_bytes;    // bytes per block
    bool quantized;
};

// Every type id found in current GGUF files, in id order. Block structs in kernels/
// static_assert their sizes against these rows.
inline constexpr GgmlTypeInfo kGgmlTypes[] = {
    {GgmlType::F32, "f32", 1, 4, false},
    {GgmlType::F16, "f16", 1, 2, false},
    {GgmlType::Q4_0, "q4_0", 32, 18, true},
    {GgmlType::Q4_1, "q4_1", 32, 20, true},
    {GgmlType::Q5_0, "q5_0", 32, 22, true},
    {GgmlType::Q5_1, "q5_1", 32, 24, true},
    {GgmlType::Q8_0, "q8_0", 32, 34, true},
    {GgmlType::Q8_1, "q8_1", 32, 36, true},
    {GgmlType::Q2_K, "q2_K", 256, 84, true},
    {GgmlType::Q3_K, "q3_K", 256, 110, true},
    {GgmlType::Q4_K, "q4_K", 256, 144, true},
    {GgmlType::Q5_K, "q5_K", 256, 176, true},
    {GgmlType::Q6_K, "q6_K", 256, 210, true},
    {GgmlType::Q8_K, "q8_K", 256, 292, true},
    {GgmlType::IQ2_XXS, "iq2_xxs", 256, 66, true},
    {GgmlType::IQ2_XS, "iq2_xs", 256, 74, true},
    {GgmlType::IQ3_XXS, "iq3_xxs", 256, 98, true},
    {GgmlType::IQ1_S, "iq1_s", 256, 50, true},
    {GgmlType::IQ4_NL, "iq4_nl", 32, 18, true},
    {GgmlType::IQ3_S, "iq3_s", 256, 110, true},
    {GgmlType::IQ2_S, "iq2_s", 256, 82, true},
    {GgmlType::IQ4_XS, "iq4_xs", 256, 136, true},
    {GgmlType::I8, "i8", 1, 1, false},
    {GgmlType::I16, "i16", 1, 2, false},
    {GgmlType::I32, "i32", 1, 4, false},
    {GgmlType::I64, "i64", 1, 8, false},
    {GgmlType::F64, "f64", 1, 8, false},
    {GgmlType::IQ1_M, "iq1_m", 256, 56, true},
    {GgmlType::BF16, "bf16", 1, 2, false},
    {GgmlType::TQ1_0, "tq1_0", 256, 54, true},
    {GgmlType::TQ2_0, "tq2_0", 256, 66, true},
    {GgmlType::MXFP4, "mxfp4", 32, 17, true},
};

// Compile-time lookup, for static_asserts: ggml_type_bytes(GgmlType::Q4_0) == 18.
constexpr const GgmlTypeInfo& ggml_type_row(GgmlType t) {
    for (const auto& row : kGgmlTypes)
        if (row.type == t) return row;
    throw "unknown ggml type";  // not a constant expression: fails the static_assert
}

// Every type id found in current GGUF files; nullptr/nullopt for an unknown id.
const GgmlTypeInfo* ggml_type_info(uint32_t id);
inline const GgmlTypeInfo& ggml_type_info(GgmlType t) { return *ggml_type_info(static_cast<uint32_t>(t)); }

// Looks a type up by name, case-insensitively ("Q4_K", "q4_k", "f16").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// Bytes of one row of n elements; nullopt when n is not a multiple of the block size.
std::optional<uint64_t> ggml_row_bytes(GgmlType t, uint64_t n);


}  // namespace pocket
