#pragma once
// The cases of shared/reference/f_quantize (and its iq/ subfolder): one per (type, none|imatrix)
// that llama-quantize made from synth-8l-f16.gguf, with its types.json and xxh64.txt.
#include "shared_data.hpp"

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace pocket::test {

struct FQuantizeCase {
    std::string type;      // "Q4_K_M"
    bool imatrix = false;
    std::filesystem::path types_json, hashes;
    std::string label() const { return type + (imatrix ? "_imatrix" : "_none"); }
};

// The cases of one folder: f_quantize itself, or its iq/ subfolder (the i-quant mixes, added later).
inline void add_f_quantize_cases(const std::filesystem::path& dir, std::vector<FQuantizeCase>& cases) {
    if (!std::filesystem::is_directory(dir)) return;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
        const std::string f = e.path().filename().string();  // synth-8l.T.none.types.json
        const std::string suffix = ".types.json", prefix = "synth-8l.";
        if (!f.starts_with(prefix) || !f.ends_with(suffix)) continue;
        const std::string mid = f.substr(prefix.size(), f.size() - prefix.size() - suffix.size());  // T.none
        const auto dot = mid.rfind('.');
        FQuantizeCase c;
        c.type = mid.substr(0, dot);
        c.imatrix = mid.substr(dot + 1) == "imatrix";
        c.types_json = e.path();
        c.hashes = dir / (prefix + mid + ".xxh64.txt");
        cases.push_back(c);
    }
}

inline std::vector<FQuantizeCase> f_quantize_cases() {
    std::vector<FQuantizeCase> cases;
    const auto shared = shared_dir();
    if (!shared) return cases;
    const auto dir = *shared / "reference" / "f_quantize";
    add_f_quantize_cases(dir, cases);
    add_f_quantize_cases(dir / "iq", cases);
    std::sort(cases.begin(), cases.end(), [](const auto& a, const auto& b) { return a.label() < b.label(); });
    return cases;
}

inline std::filesystem::path f_quantize_dir() { return *shared_dir() / "reference" / "f_quantize"; }

}  // namespace pocket::test
