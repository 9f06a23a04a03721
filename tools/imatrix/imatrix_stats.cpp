#include "imatrix_stats.hpp"

#include "pocket/error.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/output_file.hpp"
#include "pocket/quantize.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace pocket::tools {
namespace {

// llama-imatrix leaves out products of fewer tokens (a single token's decoding is not what it
// means to sample).
constexpr int64_t kMinTokens = 16;

}  // namespace

ImatrixStats::ImatrixStats(int32_t chunk_size, bool process_output) : chunk_size_(chunk_size), process_output_(process_output) {
    if (chunk_size < 1) throw Error("the chunk size must be positive");
}

ImatrixStats::Entry& ImatrixStats::entry(std::string_view name, int64_t n_in, int64_t n_mat) {
    Entry& e = entries_[std::string(name)];
    // A legacy .dat stores one count for all experts: it holds for each of them.
    if (e.counts.size() == 1 && n_mat > 1 && e.sums.size() == static_cast<size_t>(n_in * n_mat)) e.counts.assign(static_cast<size_t>(n_mat), e.counts[0]);
    if (e.sums.empty()) {
        e.sums.assign(static_cast<size_t>(n_in * n_mat), 0.0f);
        e.counts.assign(static_cast<size_t>(n_mat), 0);
    } else if (e.sums.size() != static_cast<size_t>(n_in * n_mat) || e.counts.size() != static_cast<size_t>(n_mat)) {
        throw Error("'{}': {} x {} values do not match the {} x {} already collected", name, n_in, n_mat,
                    e.counts.empty() ? 0 : e.sums.size() / e.counts.size(), e.counts.size());
    }
    return e;
}

void ImatrixStats::add(const MatmulInput& in) {
    const bool wanted = in.weight.starts_with("blk.") || (process_output_ && in.weight == "output.weight");
    if (!wanted) return;
    const int64_t n_in = in.n_in;
    Entry* touched = nullptr;
    if (in.ids) {
        // Each (slot, token) adds its input row to the expert it went to, slot by slot, as
        // llama-imatrix walks them.
        Entry& e = entry(in.weight, n_in, in.n_expert);
        touched = &e;
        for (int64_t slot = 0; slot < in.n_used; ++slot)
            for (int64_t t = 0; t < in.n_tokens; ++t) {
                const int32_t ex = in.ids[t * in.n_used + slot];
                if (ex < 0 || ex >= in.n_expert) throw Error("'{}': expert id {} out of range", in.weight, ex);
                const float* x = in.x + (t * in.n_x + slot % in.n_x) * n_in;
                float* acc = e.sums.data() + ex * n_in;
                for (int64_t j = 0; j < n_in; ++j) acc[j] += x[j] * x[j];
                ++e.counts[static_cast<size_t>(ex)];
            }
    } else {
        const int64_t n_rows = in.n_x * in.n_tokens;
        if (n_rows < kMinTokens) return;
        Entry& e = entry(in.weight, n_in, 1);
        touched = &e;
        for (int64_t r = 0; r < n_rows; ++r) {
            const float* x = in.x + r * n_in;
            for (int64_t j = 0; j < n_in; ++j) e.sums[static_cast<size_t>(j)] += x[j] * x[j];
        }
        e.counts[0] += n_rows;
    }
    for (float v : touched->sums)
        if (!std::isfinite(v)) throw Error("'{}': the sums of squared inputs are no longer finite", in.weight);
}

void ImatrixStats::add_file(const std::string& path) {
    const Imatrix m = load_imatrix(path);
    for (const auto& [name, st] : m.stored) {
        const int64_t n_mat = static_cast<int64_t>(st.counts.size());
        const int64_t n_in = static_cast<int64_t>(st.sums.size()) / n_mat;
        Entry& e = entry(name, n_in, n_mat);
        // A .dat holds averages times the call count: times the chunk size they are sums again.
        const float scale = m.legacy ? static_cast<float>(chunk_size_) : 1.0f;
        for (size_t i = 0; i < st.sums.size(); ++i) e.sums[i] += st.sums[i] * scale;
        for (size_t i = 0; i < st.counts.size(); ++i) e.counts[i] += std::llround(st.counts[i] * scale);
    }
    datasets_.insert(datasets_.end(), m.datasets.begin(), m.datasets.end());
}

int32_t ImatrixStats::chunk_count() const {
    int64_t most = 0;
    for (const auto& [name, e] : entries_)
        for (int64_t c : e.counts) most = std::max(most, c);
    return static_cast<int32_t>(most / chunk_size_);
}

namespace {

// llama-imatrix writes no entry whose inputs it never saw (a weight only used for fewer than
// 16 tokens at a time, or only met in an --in-file without data).
bool has_data(const ImatrixStats::Entry& e) {
    return std::any_of(e.counts.begin(), e.counts.end(), [](int64_t c) { return c > 0; });
}

}  // namespace

void ImatrixStats::save_gguf(const std::string& path) const {
    GgufWriter w(path);
    w.set_string("general.type", "imatrix");
    w.set_strings("imatrix.datasets", std::span<const std::string>(datasets_));
    w.set<uint32_t>("imatrix.chunk_count", static_cast<uint32_t>(chunk_count()));
    w.set<uint32_t>("imatrix.chunk_size", static_cast<uint32_t>(chunk_size_));
    for (const auto& [name, e] : entries_) {
        if (!has_data(e)) continue;
        const int64_t n_mat = static_cast<int64_t>(e.counts.size());
        // [n_in, n_mat] and [1, n_mat], written with as many dimensions as ggml gives them
        // (trailing ones dropped), as llama-imatrix's files have them.
        const std::array<int64_t, 2> sums_ne{static_cast<int64_t>(e.sums.size()) / n_mat, n_mat}, counts_ne{1, n_mat};
        const size_t dims = n_mat > 1 ? 2 : 1;
        w.add_tensor(name + ".in_sum2", GgmlType::F32, std::span(sums_ne.data(), dims));
        w.add_tensor(name + ".counts", GgmlType::F32, std::span(counts_ne.data(), dims));
    }
    w.begin();
    for (const auto& [name, e] : entries_) {
        if (!has_data(e)) continue;
        w.write(e.sums.data(), e.sums.size() * sizeof(float));
        std::vector<float> counts(e.counts.begin(), e.counts.end());
        w.write(counts.data(), counts.size() * sizeof(float));
    }
    w.finish();
}

void ImatrixStats::save_dat(const std::string& path) const {
    std::string tmp;
    const int fd = create_temporary_beside(path, tmp);
    std::FILE* f = ::fdopen(fd, "wb");
    if (!f) {
        ::close(fd);
        ::unlink(tmp.c_str());
        forget_temporary(tmp);
        throw Error("{}: cannot write: {}", path, std::strerror(errno));
    }
    auto put = [&](const void* p, size_t n) {
        if (std::fwrite(p, 1, n, f) != n) throw Error("{}: write failed: {}", path, std::strerror(errno));
    };
    auto put_i32 = [&](int32_t v) { put(&v, sizeof v); };
    try {
        put_i32(static_cast<int32_t>(std::count_if(entries_.begin(), entries_.end(), [](const auto& kv) { return has_data(kv.second); })));
        for (const auto& [name, e] : entries_) {
            if (!has_data(e)) continue;
            put_i32(static_cast<int32_t>(name.size()));
            put(name.data(), name.size());
            // The call count: the most inputs any expert saw, in chunks, rounded up.
            const int64_t most = *std::max_element(e.counts.begin(), e.counts.end());
            const int32_t ncall = static_cast<int32_t>((most + chunk_size_ - 1) / chunk_size_);
            put_i32(ncall);
            put_i32(static_cast<int32_t>(e.sums.size()));
            const size_t per_mat = e.sums.size() / e.counts.size();
            std::vector<float> v(e.sums.size());
            for (size_t i = 0; i < v.size(); ++i) {
                const float count = static_cast<float>(e.counts[i / per_mat]);
                // An expert that saw nothing stores 1, as llama-imatrix writes it.
                v[i] = count == 0.0f ? static_cast<float>(ncall) : e.sums[i] / count * static_cast<float>(ncall);
            }
            put(v.data(), v.size() * sizeof(float));
        }
        put_i32(chunk_count());
        const std::string dataset = datasets_.empty() ? std::string() : datasets_.back();
        put_i32(static_cast<int32_t>(dataset.size()));
        put(dataset.data(), dataset.size());
        if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) throw Error("{}: write failed: {}", path, std::strerror(errno));
    } catch (...) {
        std::fclose(f);
        ::unlink(tmp.c_str());
        forget_temporary(tmp);
        throw;
    }
    std::fclose(f);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        forget_temporary(tmp);
        throw Error("{}: cannot rename the temporary into place: {}", path, std::strerror(err));
    }
    forget_temporary(tmp);
}

}  // namespace pocket::tools
