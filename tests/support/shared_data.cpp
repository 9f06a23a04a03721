#include "shared_data.hpp"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace pocket::test {

std::optional<std::filesystem::path> shared_dir() {
    std::filesystem::path p;
    if (const char* env = std::getenv("POCKET_SHARED"); env && *env) p = env;
    else p = POCKET_DEFAULT_SHARED;
    if (std::filesystem::is_directory(p)) return p;
    return std::nullopt;
}

std::filesystem::path source_dir() { return POCKET_SOURCE_DIR; }

std::vector<char> read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + p.string());
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> read_f32(const std::filesystem::path& p) {
    const auto bytes = read_file(p);
    std::vector<float> v(bytes.size() / sizeof(float));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
    return v;
}

}  // namespace pocket::test
