#pragma once
// Where the tests find ../shared (reference data) and the source tree.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pocket::test {

// POCKET_SHARED, or ../shared beside the checkout; nullopt when neither exists.
// Tests that need it call GTEST_SKIP() with a message when it is absent.
std::optional<std::filesystem::path> shared_dir();

// The checkout's root (for models/ and the like).
std::filesystem::path source_dir();

std::vector<char> read_file(const std::filesystem::path& p);
std::vector<float> read_f32(const std::filesystem::path& p);

}  // namespace pocket::test

// Skips the current test, visibly, when ../shared is not there.
#define POCKET_REQUIRE_SHARED(var)                                                          \
    const auto var##_opt = ::pocket::test::shared_dir();                                    \
    if (!var##_opt) GTEST_SKIP() << "shared reference data not found (set POCKET_SHARED)"; \
    const std::filesystem::path var = *var##_opt
