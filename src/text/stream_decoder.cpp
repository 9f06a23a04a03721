#include "pocket/tokenizer.hpp"

#include "text/utf8.hpp"

namespace pocket {

namespace {

// Length of the well-formed UTF-8 sequence at `i` (RFC 3629: no overlongs, no surrogates,
// nothing past U+10FFFF), or 0 when the bytes there do not form one.
size_t valid_sequence_length(std::string_view s, size_t i) {
    const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char b0 = at(i);
    if (b0 < 0x80) return 1;
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) n = 2;
    else if (b0 >= 0xE0 && b0 <= 0xEF) n = 3, lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    else if (b0 >= 0xF0 && b0 <= 0xF4) n = 4, lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    if (i + n > s.size()) return 0;
    if (at(i + 1) < lo || at(i + 1) > hi) return 0;
    for (size_t k = 2; k < n; ++k) {
        if ((at(i + k) & 0xC0) != 0x80) return 0;
    }
    return n;
}

// Copies the well-formed sequences of `bytes` into `out`; each byte that starts none becomes
// U+FFFD.
void append_valid(std::string& out, std::string_view bytes) {
    for (size_t i = 0; i < bytes.size();) {
        const size_t n = valid_sequence_length(bytes, i);
        if (n == 0) {
            utf8::append(out, utf8::kReplacement);
            ++i;
        } else {
            out.append(bytes.substr(i, n));
            i += n;
        }
    }
}

}  // namespace

TokenStreamDecoder::TokenStreamDecoder(const Tokenizer& tokenizer, bool special)
    : tokenizer_(&tokenizer), special_(special) {}

std::string TokenStreamDecoder::push(TokenId id) {
    pending_ += tokenizer_->token_to_piece(id, special_);
    const size_t ready = utf8::complete_prefix(pending_);
    std::string out;
    append_valid(out, std::string_view(pending_).substr(0, ready));
    pending_.erase(0, ready);
    return out;
}

std::string TokenStreamDecoder::finish() {
    std::string out;
    append_valid(out, pending_);
    pending_.clear();
    return out;
}

}  // namespace pocket
