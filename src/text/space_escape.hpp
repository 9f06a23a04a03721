#pragma once
// SentencePiece writes a space as U+2581 ("▁"); SPM and WPM vocabularies store it so.
#include <string>
#include <string_view>

namespace pocket {

inline constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

void append_escaped_spaces(std::string& out, std::string_view text);  // ' ' -> U+2581
std::string unescape_spaces(std::string_view text);                   // U+2581 -> ' '

}  // namespace pocket
