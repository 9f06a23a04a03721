#pragma once
// Helpers shared by the quantize tests: a scratch folder per test, xxh64 of tensor data in
// llama-gguf-hash's format, and the reference files of shared/reference/f_quantize.
#include "pocket/gguf.hpp"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

namespace pocket::test {

// A folder of its own for one test (ctest runs tests in parallel), removed afterwards.
class ScratchDir {
public:
    ScratchDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string(info->test_suite_name()) + "-" + info->name();
        for (char& ch : name)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        path_ = std::filesystem::temp_directory_path() / ("pocket-quantize-" + name + "-" + std::to_string(::getpid()));
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    const std::filesystem::path& path() const { return path_; }
    size_t n_entries() const {
        size_t n = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(path_)) ++n;
        return n;
    }

private:
    std::filesystem::path path_;
};

inline std::string xxh64_hex(const void* data, size_t n) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(XXH64(data, n, 0)));
    return buf;
}

// llama-gguf-hash --xxh64 output: tensor name -> hash; the whole-file line under "".
inline std::map<std::string, std::string> read_hashes(const std::filesystem::path& p) {
    std::map<std::string, std::string> out;
    std::ifstream in(p);
    std::string tag, hash, where;
    while (in >> tag >> hash >> where) {
        const auto colon = where.find(':');
        out[colon == std::string::npos ? std::string() : where.substr(colon + 1)] = hash;
    }
    return out;
}

// The same hashes computed for a file: per tensor, and of all tensor data in file order.
inline std::map<std::string, std::string> hashes_of(const GgufFile& f) {
    std::map<std::string, std::string> out;
    XXH64_state_t* all = XXH64_createState();
    XXH64_reset(all, 0);
    for (const auto& t : f.tensors()) {
        out[std::string(t.name)] = xxh64_hex(t.data, t.n_bytes);
        XXH64_update(all, t.data, t.n_bytes);
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(XXH64_digest(all)));
    XXH64_freeState(all);
    out[""] = buf;
    return out;
}

}  // namespace pocket::test
