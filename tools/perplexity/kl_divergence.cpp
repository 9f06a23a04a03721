#include "kl_divergence.hpp"

#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <unistd.h>

namespace pocket::tools {
namespace {

constexpr char kMagic[8] = {'_', 'l', 'o', 'g', 'i', 't', 's', '_'};
constexpr char kOldMagic[8] = {'P', 'K', 'T', 'K', 'L', 'D', '0', '1'};  // pocket's own format before

// Below this, a log-probability is floored (the format keeps 16 nats under the top logit).
constexpr double kFloor = 16.0;

}  // namespace

void QuantizedLogProbs::from_logits(std::span<const float> logits) {
    float top = -INFINITY, bottom = INFINITY;
    for (float l : logits) {
        top = std::max(top, l);
        bottom = std::min(bottom, l);
    }
    bottom = std::max(bottom, top - static_cast<float>(kFloor));
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - top);
    const float log_sum = static_cast<float>(std::log(sum));
    min = bottom - top - log_sum;
    scale = (top - bottom) / 65535.0f;
    q.resize(logits.size());
    const float inv = scale > 0 ? 1.0f / scale : 0.0f;
    for (size_t i = 0; i < logits.size(); ++i)
        q[i] = logits[i] > bottom ? static_cast<uint16_t>(std::min(std::lround(inv * (logits[i] - bottom)), 65535L)) : 0;
}

void QuantizedLogProbs::to_log_probs(std::vector<double>& out) const {
    out.resize(q.size());
    for (size_t i = 0; i < q.size(); ++i) out[i] = static_cast<double>(scale) * q[i] + static_cast<double>(min);
}

KlBaseWriter::KlBaseWriter(const std::string& path) : path_(path) {
    // A unique temporary beside the target, as quantize's: two runs writing the same base at
    // once cannot mix their data, and SIGINT / SIGTERM remove it.
    const int fd = create_temporary_beside(path, tmp_);
    f_ = ::fdopen(fd, "wb");
    if (!f_) {
        const int err = errno;
        ::close(fd);
        discard();
        throw Error("{}: cannot open the temporary file: {}", path_, std::strerror(err));
    }
}

KlBaseWriter::~KlBaseWriter() { discard(); }

void KlBaseWriter::discard() noexcept {
    if (f_) std::fclose(f_);
    f_ = nullptr;
    if (!tmp_.empty()) {
        ::unlink(tmp_.c_str());
        forget_temporary(tmp_);
        tmp_.clear();
    }
}

void KlBaseWriter::put(const void* data, size_t size, size_t n) {
    if (!f_) throw Error("{}: the KL-divergence base file is closed", path_);
    if (n && std::fwrite(data, size, n, f_) != n) {
        const int err = errno;
        discard();
        throw Error("{}: cannot write the KL-divergence base file: {}", path_, std::strerror(err));
    }
}

void KlBaseWriter::begin(uint32_t n_ctx, uint32_t n_vocab, uint32_t n_chunk, std::span<const TokenId> tokens) {
    const int32_t header[3] = {static_cast<int32_t>(n_ctx), static_cast<int32_t>(n_vocab), static_cast<int32_t>(n_chunk)};
    put(kMagic, 1, sizeof kMagic);
    put(header, sizeof(int32_t), 3);
    put(tokens.data(), sizeof(TokenId), static_cast<size_t>(n_chunk) * n_ctx);
}

void KlBaseWriter::add(std::span<const float> logits) {
    row_.from_logits(logits);
    put(&row_.scale, sizeof(float), 1);
    put(&row_.min, sizeof(float), 1);
    put(row_.q.data(), sizeof(uint16_t), row_.q.size());
    if (row_.q.size() % 2) {
        const uint16_t pad = 0;
        put(&pad, sizeof pad, 1);
    }
}

void KlBaseWriter::finish() {
    if (!f_) throw Error("{}: the KL-divergence base file is closed", path_);
    const bool ok = std::fflush(f_) == 0 && !std::ferror(f_) && ::fsync(::fileno(f_)) == 0;
    const int err = errno;
    std::fclose(f_);
    f_ = nullptr;
    if (!ok || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int rename_err = ok ? errno : err;
        discard();
        throw Error("{}: cannot write the KL-divergence base file: {}", path_, std::strerror(rename_err));
    }
    forget_temporary(tmp_);
    tmp_.clear();
}

KlBaseReader::KlBaseReader(const std::string& path, uint32_t n_ctx, uint32_t n_vocab, std::span<const TokenId> tokens)
    : path_(path), n_vocab_(n_vocab) {
    f_ = std::fopen(path.c_str(), "rb");
    if (!f_) throw Error("{}: cannot open the KL-divergence base file: {}", path, std::strerror(errno));
    char magic[8] = {};
    int32_t header[3] = {};
    if (std::fread(magic, 1, 8, f_) == 8 && std::memcmp(magic, kOldMagic, 8) == 0)
        throw Error("{}: a KL-divergence base in pocket's old format: make it again with --kl-divergence-base alone", path);
    if (std::memcmp(magic, kMagic, 8) != 0 || std::fread(header, sizeof(int32_t), 3, f_) != 3)
        throw Error("{}: not a KL-divergence base file (llama-perplexity's --kl-divergence-base format)", path);
    if (header[0] != static_cast<int32_t>(n_ctx)) throw Error("{}: made with -c {}, not {}", path, header[0], n_ctx);
    if (header[1] != static_cast<int32_t>(n_vocab))
        throw Error("{}: made for a vocabulary of {} tokens, this model has {}", path, header[1], n_vocab);
    if (header[2] < 1 || static_cast<uint64_t>(header[2]) * n_ctx > tokens.size())
        throw Error("{}: holds {} chunks of {} tokens, more than this text's {} tokens", path, header[2], n_ctx, tokens.size());
    n_chunk_ = static_cast<uint32_t>(header[2]);
    std::vector<TokenId> saved(static_cast<size_t>(n_chunk_) * n_ctx);
    if (std::fread(saved.data(), sizeof(TokenId), saved.size(), f_) != saved.size())
        throw Error("{}: truncated KL-divergence base file", path);
    if (!std::equal(saved.begin(), saved.end(), tokens.begin())) throw Error("{}: made from a different text or tokenizer", path);
}

KlBaseReader::~KlBaseReader() {
    if (f_) std::fclose(f_);
}

void KlBaseReader::next(QuantizedLogProbs& row) {
    row.q.resize(n_vocab_);
    uint16_t pad;
    if (std::fread(&row.scale, sizeof(float), 1, f_) != 1 || std::fread(&row.min, sizeof(float), 1, f_) != 1 ||
        std::fread(row.q.data(), sizeof(uint16_t), n_vocab_, f_) != n_vocab_ || (n_vocab_ % 2 && std::fread(&pad, sizeof pad, 1, f_) != 1))
        throw Error("{}: truncated KL-divergence base file", path_);
}

}  // namespace pocket::tools
