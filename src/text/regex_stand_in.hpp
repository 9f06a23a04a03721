#pragma once
// The code point a pre-tokenizer regex should see in place of `cpt`. PCRE2 (10.42: Unicode 14)
// and llama.cpp's tables (Unicode 15.1) disagree on a few thousand newer characters, which
// PCRE2 takes as unassigned, and on U+180E, which PCRE2 counts as whitespace. Such a code
// point is replaced, for matching only, by one that PCRE2 puts in the category utf8proc
// (Unicode 15) gives it. The stand-ins are non-ASCII, and every regex that uses Unicode
// properties has only ASCII literals (llama.cpp refuses the mix), so no literal can match one.
#include <cstdint>

namespace pocket {

// For regexes that use Unicode properties (\p{..}).
uint32_t regex_stand_in(uint32_t cpt);

// For regexes of literal characters only: the code point itself, except what PCRE2 cannot take
// in UTF mode (surrogates, values past U+10FFFF) and U+180E, which its \s would match.
uint32_t regex_literal_stand_in(uint32_t cpt);

}  // namespace pocket
