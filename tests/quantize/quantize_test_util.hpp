#pragma once
// Helpers shared by the quantize tests: a scratch folder per test, xxh64 of tensor data in
// llama-gguf-hash's format, and the reference files of shared/reference/f_quantize.
#include "pocket/gguf.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

namespace pocket::test {

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
