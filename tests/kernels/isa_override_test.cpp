// POCKET_ISA picks the ISA at start-up; one it cannot run (or an unknown name) falls back
// to the best supported one. This binary is registered several times by CMake, each with
// a different POCKET_ISA; without the variable it checks the default choice.
#include "kernels/kernels.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace pocket::kernels {
namespace {

Isa best_supported() {
    for (Isa i : {Isa::avx512, Isa::avxvnni, Isa::avx2, Isa::neon})
        if (isa_supported(i)) return i;
    return Isa::scalar;
}

TEST(IsaOverride, EnvironmentChoosesTheIsa) {
    const char* env = std::getenv("POCKET_ISA");
    if (!env || !*env) {
        EXPECT_EQ(active_isa(), best_supported()) << "default should be the best supported ISA";
        return;
    }
    for (Isa i : {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::neon}) {
        if (std::string_view(env) == isa_name(i)) {
            if (!isa_supported(i)) {
                EXPECT_EQ(active_isa(), best_supported()) << env << " is unsupported here: expected the fallback";
            } else {
                EXPECT_EQ(active_isa(), i);
            }
            return;
        }
    }
    EXPECT_EQ(active_isa(), best_supported()) << "unknown POCKET_ISA=" << env << ": expected the fallback";
}

}  // namespace
}  // namespace pocket::kernels
