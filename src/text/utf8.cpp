#include "text/utf8.hpp"

namespace pocket::utf8 {

size_t sequence_length(unsigned char lead) {
    static constexpr unsigned char kByHighNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return kByHighNibble[lead >> 4];
}

static bool is_continuation(std::string_view text, size_t i) {
    return i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80;
}

uint32_t decode_one(std::string_view text, size_t& offset) {
    const auto b0 = static_cast<unsigned char>(text[offset]);
    if (b0 < 0x80) {
        offset += 1;
        return b0;
    }
    size_t n = 0;
    uint32_t cpt = 0;
    if ((b0 & 0xE0) == 0xC0) {
        n = 2;
        cpt = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 3;
        cpt = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 4;
        cpt = b0 & 0x07;
    } else {  // a continuation byte or 0xF8..0xFF
        offset += 1;
        return kReplacement;
    }
    for (size_t i = 1; i < n; ++i) {
        if (!is_continuation(text, offset + i)) {
            offset += 1;
            return kReplacement;
        }
        cpt = (cpt << 6) | (static_cast<unsigned char>(text[offset + i]) & 0x3F);
    }
    offset += n;
    return cpt;
}

std::vector<uint32_t> decode(std::string_view text) {
    std::vector<uint32_t> cpts;
    cpts.reserve(text.size());
    for (size_t offset = 0; offset < text.size();) cpts.push_back(decode_one(text, offset));
    return cpts;
}

void append(std::string& out, uint32_t cpt) {
    if (cpt <= 0x7F) {
        out.push_back(static_cast<char>(cpt));
    } else if (cpt <= 0x7FF) {
        out.push_back(static_cast<char>(0xC0 | (cpt >> 6)));
        out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    } else if (cpt <= 0xFFFF) {
        out.push_back(static_cast<char>(0xE0 | (cpt >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    } else if (cpt <= 0x10FFFF) {
        out.push_back(static_cast<char>(0xF0 | (cpt >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cpt >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cpt >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cpt & 0x3F)));
    } else {
        append(out, kReplacement);
    }
}

std::string encode(uint32_t cpt) {
    std::string s;
    append(s, cpt);
    return s;
}

size_t complete_prefix(std::string_view bytes) {
    // Look back at most 3 bytes for the lead byte of an unfinished sequence.
    const size_t n = bytes.size();
    for (size_t back = 1; back <= 3 && back <= n; ++back) {
        const auto b = static_cast<unsigned char>(bytes[n - back]);
        if ((b & 0xC0) == 0x80) continue;  // continuation: keep looking for the lead
        size_t need = 0;
        if ((b & 0xE0) == 0xC0) need = 2;
        else if ((b & 0xF0) == 0xE0) need = 3;
        else if ((b & 0xF8) == 0xF0) need = 4;
        return need > back ? n - back : n;
    }
    return n;
}

}  // namespace pocket::utf8
