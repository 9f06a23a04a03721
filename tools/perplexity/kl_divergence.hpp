#pragma once
// The base model's log-probabilities, saved compactly for --kl-divergence: per scored
// position, the log-softmax of the logits quantized to 16 bits between its minimum and its
// maximum (a few 1e-4 of absolute error in log-probability, where it hardly matters: the low tail).
#include "pocket/vocab.hpp"

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace pocket::tools {

struct QuantizedLogProbs {
    float min = 0, scale = 0;
    std::vector<uint16_t> q;
    void from_logits(std::span<const float> logits);   // log-softmax, then quantize
    void to_log_probs(std::vector<double>& out) const;  // dequantize
};

// Writes into a unique temporary beside `path` (made by the constructor, so that a file
// that cannot be written fails before any work) and renames it into place when finished;
// destroyed unfinished, it removes the temporary. Write errors throw at once, with the reason.
class KlBaseWriter {
public:
    explicit KlBaseWriter(const std::string& path);
    ~KlBaseWriter();
    KlBaseWriter(const KlBaseWriter&) = delete;
    KlBaseWriter& operator=(const KlBaseWriter&) = delete;
    void begin(uint32_t n_ctx, uint32_t n_vocab, std::span<const TokenId> tokens);  // the header
    void add(std::span<const float> logits);  // one scored position
    void finish();                            // flush, check, rename into place
private:
    void put(const void* data, size_t size, size_t n);
    void discard() noexcept;
    std::string path_, tmp_;
    std::FILE* f_ = nullptr;
    QuantizedLogProbs row_;
};

class KlBaseReader {
public:
    // Checks that the file was made for the same context size, vocabulary and tokens.
    KlBaseReader(const std::string& path, uint32_t n_ctx, uint32_t n_vocab, std::span<const TokenId> tokens);
    ~KlBaseReader();
    void next(QuantizedLogProbs& row);  // the next scored position
private:
    std::string path_;
    std::FILE* f_ = nullptr;
    uint32_t n_vocab_;
};

}  // namespace pocket::tools
