#pragma once
// Test helpers for the kernels: where the shared reference data is, file reading, and
// type names. Local (not tests/support) so these tests need only pocket_kernels.
#include "kernels/kernels.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace pocket::kernels::test {

// POCKET_SHARED, else ../shared beside the checkout; nullopt when absent.
std::optional<std::filesystem::path> shared_dir();
std::vector<uint8_t> read_bytes(const std::filesystem::path& p);
std::vector<float> read_floats(const std::filesystem::path& p);

// The 14 types of shared/reference/e_dequant, by the names used in its file names.
struct RefType {
    const char* file_name;
    GgmlType type;
    bool imatrix = false;  // made with e_dequant/imatrix.blk.0.attn_k.weight.f32 (MANIFEST's "A" rows)
};
extern const RefType kRefTypes[14];
// The low-bit, ternary and MXFP4 types added later to e_dequant (MANIFEST section e).
extern const RefType kLowBitRefTypes[10];

size_t row_bytes(GgmlType t, int64_t n);
uint32_t block_size(GgmlType t);
const char* type_name(GgmlType t);

// Every ISA with a name, supported or not (tests skip the ones this CPU lacks).
inline constexpr Isa kAllIsas[] = {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::neon};

// Restores the active ISA when a test ends.
struct IsaGuard {
    Isa saved = active_isa();
    ~IsaGuard() { set_active_isa(saved); }
};

}  // namespace pocket::kernels::test

#define POCKET_KERNELS_REQUIRE_SHARED(var)                                                 \
    const auto var##_opt = ::pocket::kernels::test::shared_dir();                          \
    if (!var##_opt) GTEST_SKIP() << "shared reference data not found (set POCKET_SHARED)"; \
    const std::filesystem::path var = *var##_opt
