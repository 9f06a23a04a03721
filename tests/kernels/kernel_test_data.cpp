#include "kernel_test_data.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace pocket::kernels::test {

std::optional<std::filesystem::path> shared_dir() {
    if (const char* env = std::getenv("POCKET_SHARED"); env && *env) {
        if (std::filesystem::is_directory(env)) return std::filesystem::path(env);
        return std::nullopt;
    }
    if (std::filesystem::is_directory(POCKET_DEFAULT_SHARED)) return std::filesystem::path(POCKET_DEFAULT_SHARED);
    return std::nullopt;
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<float> read_floats(const std::filesystem::path& p) {
    const auto bytes = read_bytes(p);
    std::vector<float> out(bytes.size() / sizeof(float));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
    return out;
}

const RefType kRefTypes[14] = {
    {"F16", GgmlType::F16},       {"BF16", GgmlType::BF16},    {"Q4_0", GgmlType::Q4_0}, {"Q4_1", GgmlType::Q4_1},
    {"Q5_0", GgmlType::Q5_0},     {"Q5_1", GgmlType::Q5_1},    {"Q8_0", GgmlType::Q8_0}, {"Q2_K", GgmlType::Q2_K},
    {"Q3_K", GgmlType::Q3_K},     {"Q4_K", GgmlType::Q4_K},    {"Q5_K", GgmlType::Q5_K}, {"Q6_K", GgmlType::Q6_K},
    {"IQ4_NL", GgmlType::IQ4_NL}, {"IQ4_XS", GgmlType::IQ4_XS},
};

const RefType kLowBitRefTypes[10] = {
    {"IQ1_S", GgmlType::IQ1_S, true},     {"IQ1_M", GgmlType::IQ1_M, true},   {"IQ2_XXS", GgmlType::IQ2_XXS, true},
    {"IQ2_XS", GgmlType::IQ2_XS, true},   {"IQ2_S", GgmlType::IQ2_S, true},   {"IQ3_XXS", GgmlType::IQ3_XXS, true},
    {"IQ3_S", GgmlType::IQ3_S, false},    {"TQ1_0", GgmlType::TQ1_0, false},  {"TQ2_0", GgmlType::TQ2_0, false},
    {"MXFP4", GgmlType::MXFP4, false},
};

size_t row_bytes(GgmlType t, int64_t n) {
    for (const auto& r : kGgmlTypes)
        if (r.type == t) return static_cast<size_t>(n / r.block_size) * r.block_bytes;
    return 0;
}

uint32_t block_size(GgmlType t) {
    for (const auto& r : kGgmlTypes)
        if (r.type == t) return r.block_size;
    return 0;
}

const char* type_name(GgmlType t) {
    for (const auto& r : kGgmlTypes)
        if (r.type == t) return r.name.data();
    return "?";
}

}  // namespace pocket::kernels::test
