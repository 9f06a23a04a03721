#include "text/byte_encoding.hpp"

#include "text/utf8.hpp"

#include <array>

namespace pocket::byte_encoding {

namespace {

bool maps_to_itself(int byte) {
    return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct Tables {
    std::array<std::string, 256> byte_to_text;
    std::array<int16_t, 0x144> cpt_to_byte{};  // code points used are all below U+0144

    Tables() {
        cpt_to_byte.fill(-1);
        int next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const int cpt = maps_to_itself(b) ? b : next++;
            byte_to_text[b] = utf8::encode(static_cast<uint32_t>(cpt));
            cpt_to_byte[cpt] = static_cast<int16_t>(b);
        }
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

}  // namespace

const std::string& encode_byte(uint8_t byte) { return tables().byte_to_text[byte]; }

void encode(std::string_view raw, std::string& out) {
    const auto& t = tables();
    for (char c : raw) out += t.byte_to_text[static_cast<uint8_t>(c)];
}

std::optional<uint8_t> decode_cpt(uint32_t cpt) {
    const auto& t = tables();
    if (cpt >= t.cpt_to_byte.size() || t.cpt_to_byte[cpt] < 0) return std::nullopt;
    return static_cast<uint8_t>(t.cpt_to_byte[cpt]);
}

}  // namespace pocket::byte_encoding
