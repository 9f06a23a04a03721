#pragma once
// The Unicode facts the WordPiece normalizer needs, answered the way llama.cpp's tables
// (generated from UnicodeData.txt) answer them. Backed by utf8proc.
#include <cstdint>

namespace pocket::unicode {

enum class Category { Undefined, Letter, Mark, Number, Punctuation, Symbol, Separator, Control };

Category category(uint32_t cpt);
bool is_whitespace(uint32_t cpt);   // the White_Space set llama.cpp uses
uint32_t to_lower(uint32_t cpt);    // simple lowercase mapping
uint32_t nfd_first(uint32_t cpt);   // first code point of the canonical decomposition

}  // namespace pocket::unicode
