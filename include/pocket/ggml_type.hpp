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

// Every type id found in current GGUF files; nullptr/nullopt for an unknown id.
const GgmlTypeInfo* ggml_type_info(uint32_t id);
inline const GgmlTypeInfo& ggml_type_info(GgmlType t) { return *ggml_type_info(static_cast<uint32_t>(t)); }

// Looks a type up by name, case-insensitively ("Q4_K", "q4_k", "f16").
std::optional<GgmlType> ggml_type_from_name(std::string_view name);

// Bytes of one row of n elements; nullopt when n is not a multiple of the block size.
std::optional<uint64_t> ggml_row_bytes(GgmlType t, uint64_t n);

// The table itself, for listing.
struct GgmlTypeTable { const GgmlTypeInfo* begin; const GgmlTypeInfo* end; };
GgmlTypeTable ggml_type_table();

}  // namespace pocket
