#include "text/space_escape.hpp"

namespace pocket {

void append_escaped_spaces(std::string& out, std::string_view text) {
    for (char c : text) {
        if (c == ' ') out.append(kSpaceMarker);
        else out += c;
    }
}

std::string unescape_spaces(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (text.substr(i, kSpaceMarker.size()) == kSpaceMarker) {
            out += ' ';
            i += kSpaceMarker.size();
        } else {
            out += text[i++];
        }
    }
    return out;
}

}  // namespace pocket
