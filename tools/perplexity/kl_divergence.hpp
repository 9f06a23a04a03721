#pragma once
// The base model's log-probabilities for --kl-divergence, in llama-perplexity's file format,
// so that a base made by either tool is read by the other:
//   "_logits_", int32 n_ctx, int32 n_vocab, int32 n_chunk, int32 tokens[n_chunk * n_ctx],
//   then per chunk, per scored position (n_ctx - 1 - n_ctx/2 of them), one record of
//   2 * ((n_vocab + 1) / 2) + 4 uint16: float scale, float min_log_prob, n_vocab uint16 q
//   (log p = scale * q + min_log_prob; logits more than 16 below the maximum are floored
//   there), and one uint16 of padding when n_vocab is odd. All little-endian.
#include "pocket/vocab.hpp"

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace pocket::tools {

struct QuantizedLogProbs {
    float min = 0, scale = 0;  // min: the log-probability that q = 0 stands for
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
    // The header: the first n_chunk * n_ctx tokens of the text.
    void begin(uint32_t n_ctx, uint32_t n_vocab, uint32_t n_chunk, std::span<const TokenId> tokens);
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
    // Checks that the file was made for the same context size, vocabulary and tokens (the
    // text may go on past the file's chunks).
    KlBaseReader(const std::string& path, uint32_t n_ctx, uint32_t n_vocab, std::span<const TokenId> tokens);
    ~KlBaseReader();
    uint32_t n_chunk() const { return n_chunk_; }  // chunks the file holds
    void next(QuantizedLogProbs& row);  // the next scored position
private:
    std::string path_;
    std::FILE* f_ = nullptr;
    uint32_t n_vocab_, n_chunk_ = 0;
};

}  // namespace pocket::tools
