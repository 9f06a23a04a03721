#include "pocket/ggml_type.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <cctype>

namespace pocket {
namespace {

constexpr auto& kTable = kGgmlTypes;
constexpr uint32_t kMaxId = 39;

constexpr std::array<int8_t, kMaxId + 1> make_index() {
    std::array<int8_t, kMaxId + 1> index{};
    for (auto& i : index) i = -1;
    for (size_t i = 0; i < std::size(kTable); ++i) index[static_cast<uint32_t>(kTable[i].type)] = static_cast<int8_t>(i);
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


}  // namespace pocket
