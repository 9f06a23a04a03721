// Importance matrices, in both of llama-imatrix's formats.
//
// GGUF (the default since 2025): per tensor NAME, two F32 tensors NAME.in_sum2 (sum of the
// squared activations of each column, ne0 * n_expert values) and NAME.counts (how many
// activations each expert saw); keys imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size.
// Legacy .dat: int32 n_entries, then per entry int32 name length, the name, int32 ncall,
// int32 nval, nval floats (already averaged per call, times ncall); then optionally int32
// chunk count, int32 length and the dataset name.
//
// Either way the weights handed to the quantizers are sums divided by counts in float, as
// llama-quantize divides them, so that the quantized bytes match its.
#include "pocket/error.hpp"
#include "pocket/quantize.hpp"

#include <cmath>
#include <cstring>
#include <fstream>

namespace pocket {
namespace {

bool looks_like_gguf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("{}: cannot open the imatrix file: {}", path, std::strerror(errno));
    char magic[4] = {};
    in.read(magic, 4);
    return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

Imatrix load_gguf(const std::string& path) {
    const GgufFile f = GgufFile::open(path);
    Imatrix m;
    m.path = path;
    const GgufValue* datasets = f.find("imatrix.datasets");
    const GgufValue* chunk_count = f.find("imatrix.chunk_count");
    // llama-quantize refuses a GGUF imatrix without its metadata (not a file llama-imatrix wrote).
    if (!datasets || !chunk_count || !f.find("imatrix.chunk_size"))
        throw Error("{}: not an imatrix: the imatrix.datasets, imatrix.chunk_count and imatrix.chunk_size keys are missing", path);
    for (std::string_view d : datasets->strings()) m.datasets.emplace_back(d);
    m.chunk_count = static_cast<int>(gguf_value_as<uint32_t>(*chunk_count).value_or(0));

    const std::string_view sums_suffix = ".in_sum2", counts_suffix = ".counts";
    for (const auto& t : f.tensors()) {
        if (!t.name.ends_with(sums_suffix)) {
            if (!t.name.ends_with(counts_suffix)) continue;
            const std::string_view base = t.name.substr(0, t.name.size() - counts_suffix.size());
            if (!f.find_tensor(std::string(base) + std::string(sums_suffix)))
                throw Error("{}: '{}' has counts but no sums", path, base);
            continue;
        }
        const std::string name(t.name.substr(0, t.name.size() - sums_suffix.size()));
        const GgufTensorInfo* counts = f.find_tensor(name + std::string(counts_suffix));
        if (!counts) throw Error("{}: '{}' has sums but no counts", path, name);
        if (t.type != GgmlType::F32 || counts->type != GgmlType::F32)
            throw Error("{}: the sums and counts of '{}' must be F32", path, name);
        const int64_t n = t.n_elements(), n_counts = counts->n_elements();
        if (n_counts < 1 || n % n_counts != 0)
            throw Error("{}: '{}' has {} sums for {} counts", path, name, n, n_counts);
        const int64_t ne0 = n / n_counts;
        std::vector<float> sums(static_cast<size_t>(n)), cnt(static_cast<size_t>(n_counts));
        std::memcpy(sums.data(), t.data, sums.size() * sizeof(float));
        std::memcpy(cnt.data(), counts->data, cnt.size() * sizeof(float));
        std::vector<float>& out = m.values[name];
        out.resize(sums.size());
        for (int64_t j = 0; j < n_counts; ++j) {
            const float count = static_cast<float>(std::lround(cnt[static_cast<size_t>(j)]));
            for (int64_t i = 0; i < ne0; ++i) {
                const size_t k = static_cast<size_t>(j * ne0 + i);
                out[k] = count > 0 ? sums[k] / count : 1.0f;  // an expert never used: neutral weights
            }
        }
        m.stored[name] = {std::move(sums), std::move(cnt)};
    }
    if (m.values.empty()) throw Error("{}: the imatrix holds no entries", path);
    return m;
}

class DatReader {
public:
    explicit DatReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
        if (!in_) throw Error("{}: cannot open the imatrix file: {}", path, std::strerror(errno));
    }
    int32_t i32(const char* what) {
        int32_t v = 0;
        bytes(&v, sizeof v, what);
        return v;
    }
    void bytes(void* dst, size_t n, const char* what) {
        in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
        if (static_cast<size_t>(in_.gcount()) != n) throw Error("{}: truncated imatrix (reading {})", path_, what);
    }
    bool at_end() { return in_.peek() == std::char_traits<char>::eof(); }

private:
    std::string path_;
    std::ifstream in_;
};

Imatrix load_dat(const std::string& path) {
    DatReader r(path);
    Imatrix m;
    m.path = path;
    m.legacy = true;
    const int32_t n_entries = r.i32("the entry count");
    if (n_entries < 1) throw Error("{}: not an imatrix (no entries)", path);
    for (int32_t e = 0; e < n_entries; ++e) {
        const int32_t len = r.i32("a name length");
        if (len < 1 || len > 4096) throw Error("{}: not an imatrix (entry {} has a name of {} bytes)", path, e, len);
        std::string name(static_cast<size_t>(len), '\0');
        r.bytes(name.data(), name.size(), "a name");
        const int32_t ncall = r.i32("a call count");
        const int32_t nval = r.i32("a value count");
        if (nval < 1 || nval > (1 << 28)) throw Error("{}: entry '{}' has {} values", path, name, nval);
        std::vector<float> values(static_cast<size_t>(nval));
        r.bytes(values.data(), values.size() * sizeof(float), "values");
        m.stored[name] = {values, {static_cast<float>(ncall)}};
        // The stored values are averages times ncall: divide it back out.
        if (ncall > 0)
            for (float& v : values) v = v / static_cast<float>(ncall);
        m.values[name] = std::move(values);
    }
    if (!r.at_end()) {  // optional trailer: chunk count and dataset name
        m.chunk_count = r.i32("the chunk count");
        if (!r.at_end()) {
            const int32_t len = r.i32("the dataset name length");
            if (len > 0 && len < (1 << 20)) {
                std::string dataset(static_cast<size_t>(len), '\0');
                r.bytes(dataset.data(), dataset.size(), "the dataset name");
                m.datasets.push_back(dataset.c_str());  // up to its first NUL, as llama.cpp reads it
            }
        }
    }
    return m;
}

}  // namespace

Imatrix load_imatrix(const std::string& path) {
    Imatrix m = looks_like_gguf(path) ? load_gguf(path) : load_dat(path);
    for (const auto& [name, values] : m.values)
        for (float v : values)
            if (!std::isfinite(v)) throw Error("{}: the imatrix entry for '{}' holds a non-finite value", path, name);
    return m;
}

}  // namespace pocket
