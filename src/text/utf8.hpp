#pragma once
// UTF-8 decoding and encoding with llama.cpp's rules, so that odd input splits the same way:
// the length of a sequence comes from its lead byte alone, an undecodable byte becomes U+FFFD
// and consumes one byte, and no overlong or surrogate check is made.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pocket::utf8 {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Bytes in the sequence that starts with `lead`, judged by its high nibble (1 for a stray
// continuation byte, as llama.cpp's symbol splitting does).
size_t sequence_length(unsigned char lead);

// Decodes one code point at `offset` and advances it; an invalid sequence yields U+FFFD and
// advances by one byte.
uint32_t decode_one(std::string_view text, size_t& offset);

std::vector<uint32_t> decode(std::string_view text);

// Appends the UTF-8 form of `cpt`; values past U+10FFFF become U+FFFD.
void append(std::string& out, uint32_t cpt);
std::string encode(uint32_t cpt);

// Length of the longest prefix of `bytes` that ends on a complete sequence boundary, given
// that the bytes after it may still be completed by more input.
size_t complete_prefix(std::string_view bytes);

}  // namespace pocket::utf8
