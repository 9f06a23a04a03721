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

constexpr char kMagic[8] = {'P', 'K', 'T', 'K', 'L', 'D', '0', '1'};

struct Header {
    char magic[8];
    uint32_t n_ctx, n_vocab, n_tokens, reserved;
};

}  // namespace

void QuantizedLogProbs::from_logits(std::span<const float> logits) {
    double max = -INFINITY;
    for (float l : logits) max = std::max(max, static_cast<double>(l));
    double sum = 0;
    for (float l : logits) sum += std::exp(l - max);
    const double log_z = max + std::log(sum);
    double lo = 0;
    for (float l : logits) lo = std::min(lo, l - log_z);
    min = static_cast<float>(lo);
    scale = static_cast<float>(-lo / 65535.0);
    q.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) {
        const double v = scale > 0 ? (logits[i] - log_z - min) / scale : 0;
        q[i] = static_cast<uint16_t>(std::clamp(std::lround(v), 0L, 65535L));
    }
}

void QuantizedLogProbs::to_log_probs(std::vector<double>& out) const {
    out.resize(q.size());
    for (size_t i = 0; i < q.size(); ++i) out[i] = static_cast<double>(min) + static_cast<double>(scale) * q[i];
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

void KlBaseWriter::begin(uint32_t n_ctx, uint32_t n_vocab, std::span<const TokenId> tokens) {
    Header h{};
    std::memcpy(h.magic, kMagic, 8);
    h.n_ctx = n_ctx;
    h.n_vocab = n_vocab;
    h.n_tokens = static_cast<uint32_t>(tokens.size());
    put(&h, sizeof h, 1);
    put(tokens.data(), sizeof(TokenId), tokens.size());
}

void KlBaseWriter::add(std::span<const float> logits) {
    row_.from_logits(logits);
    put(&row_.min, sizeof(float), 1);
    put(&row_.scale, sizeof(float), 1);
    put(row_.q.data(), sizeof(uint16_t), row_.q.size());
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
    Header h{};
    if (std::fread(&h, sizeof h, 1, f_) != 1 || std::memcmp(h.magic, kMagic, 8) != 0)
        throw Error("{}: not a pocket KL-divergence base file (make one with --kl-divergence-base alone)", path);
    if (h.n_ctx != n_ctx) throw Error("{}: made with -c {}, not {}", path, h.n_ctx, n_ctx);
    if (h.n_vocab != n_vocab) throw Error("{}: made for a vocabulary of {} tokens, this model has {}", path, h.n_vocab, n_vocab);
    if (h.n_tokens != tokens.size()) throw Error("{}: made from {} tokens of text, this text has {}", path, h.n_tokens, tokens.size());
    std::vector<TokenId> saved(tokens.size());
    if (std::fread(saved.data(), sizeof(TokenId), saved.size(), f_) != saved.size() || !std::equal(saved.begin(), saved.end(), tokens.begin()))
        throw Error("{}: made from a different text or tokenizer", path);
}

KlBaseReader::~KlBaseReader() {
    if (f_) std::fclose(f_);
}

void KlBaseReader::next(QuantizedLogProbs& row) {
    row.q.resize(n_vocab_);
    if (std::fread(&row.min, sizeof(float), 1, f_) != 1 || std::fread(&row.scale, sizeof(float), 1, f_) != 1 ||
        std::fread(row.q.data(), sizeof(uint16_t), n_vocab_, f_) != n_vocab_)
        throw Error("{}: truncated KL-divergence base file", path_);
}

}  // namespace pocket::tools
