// Expands the grids' level indices (iq_grid_codes.inc) into ggml's byte layout, at compile time.
#include "kernels/iq_grids.hpp"

#include <cstddef>

namespace pocket::kernels {
namespace {

#include "kernels/iq_grid_codes.inc"

template <class Entry, size_t N, size_t Levels>
constexpr std::array<Entry, N> expand(const uint16_t (&codes)[N], const std::array<uint8_t, Levels>& levels) {
    std::array<Entry, N> grid{};
    for (size_t k = 0; k < N; ++k) {
        unsigned code = codes[k];
        Entry e = 0;
        for (size_t j = 0; j < sizeof(Entry); ++j) {
            e |= static_cast<Entry>(levels[code % Levels]) << (8 * j);
            code /= Levels;
        }
        grid[k] = e;
    }
    return grid;
}

constexpr std::array<uint8_t, 3> kIq2Levels = {0x08, 0x19, 0x2b};
constexpr std::array<uint8_t, 8> kIq3xxsLevels = {4, 12, 20, 28, 36, 44, 52, 62};
constexpr std::array<uint8_t, 8> kIq3sLevels = {1, 3, 5, 7, 9, 11, 13, 15};
constexpr std::array<uint8_t, 3> kIq1Levels = {0xff, 0x00, 0x01};  // int8 -1, 0, +1

}  // namespace

constexpr std::array<uint64_t, 256> kIq2xxsGrid = expand<uint64_t>(kIq2xxsCodes, kIq2Levels);
constexpr std::array<uint64_t, 512> kIq2xsGrid = expand<uint64_t>(kIq2xsCodes, kIq2Levels);
constexpr std::array<uint64_t, 1024> kIq2sGrid = expand<uint64_t>(kIq2sCodes, kIq2Levels);
constexpr std::array<uint32_t, 256> kIq3xxsGrid = expand<uint32_t>(kIq3xxsCodes, kIq3xxsLevels);
constexpr std::array<uint32_t, 512> kIq3sGrid = expand<uint32_t>(kIq3sCodes, kIq3sLevels);
constexpr std::array<uint64_t, 2048> kIq1sGrid = expand<uint64_t>(kIq1sCodes, kIq1Levels);

}  // namespace pocket::kernels
