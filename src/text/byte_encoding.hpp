#pragma once
// GPT-2's byte-level encoding: every byte maps to one printable code point, so that byte-level
// BPE vocabularies can store arbitrary bytes as text. Printable Latin-1 bytes map to themselves;
// the other 68 bytes map, in order, to U+0100 and up.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pocket::byte_encoding {

// The UTF-8 text of the code point that stands for `byte`.
const std::string& encode_byte(uint8_t byte);

// Appends the byte-level form of every byte of `raw`.
void encode(std::string_view raw, std::string& out);

// The byte that the code point `cpt` stands for, if it is one of the 256.
std::optional<uint8_t> decode_cpt(uint32_t cpt);

}  // namespace pocket::byte_encoding
