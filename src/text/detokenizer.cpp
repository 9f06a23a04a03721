#include "text/detokenizer.hpp"

#include "text/byte_encoding.hpp"
#include "text/space_escape.hpp"
#include "text/utf8.hpp"

#include <fmt/format.h>

namespace pocket {

namespace {

// A BPE token's text is in GPT-2's byte alphabet; a code point outside it is kept visible.
std::string decode_byte_level(std::string_view text) {
    std::string out;
    for (uint32_t cpt : utf8::decode(text)) {
        if (auto b = byte_encoding::decode_cpt(cpt)) {
            out += static_cast<char>(*b);
            continue;
        }
        out += "[UNK_BYTE_0x";
        for (unsigned char c : utf8::encode(cpt)) out += fmt::format("{:02x}", c);
        out.append(text).append("]");
    }
    return out;
}

char byte_of_hex_token(std::string_view text) {
    // "<0xXX>"
    unsigned value = 0;
    for (char c : text.substr(3, 2)) {
        value <<= 4;
        if (c >= '0' && c <= '9') value |= static_cast<unsigned>(c - '0');
        else if (c >= 'A' && c <= 'F') value |= static_cast<unsigned>(c - 'A' + 10);
        else if (c >= 'a' && c <= 'f') value |= static_cast<unsigned>(c - 'a' + 10);
    }
    return static_cast<char>(value);
}

}  // namespace

std::string token_piece(const Vocab& vocab, TokenId id, bool special) {
    const TokenData& t = vocab.token(id);
    if (!special && (t.attr & (kTokenUnknown | kTokenControl))) return {};
    if (t.attr & (kTokenUnknown | kTokenControl | kTokenUserDefined)) return t.text;
    if (t.attr & kTokenNormal) {
        return vocab.type() == VocabType::Bpe ? decode_byte_level(t.text) : unescape_spaces(t.text);
    }
    if ((t.attr & kTokenByte) && t.text.size() >= 6) return std::string(1, byte_of_hex_token(t.text));
    return {};
}

std::string clean_up_spaces(const std::string& text) {
    if (text.empty()) return text;
    auto is_punct = [](char c) { return c == '?' || c == '!' || c == '.' || c == ','; };

    // 1: no space before ? ! . ,
    std::string a(1, text[0]);
    for (size_t i = 1; i < text.size(); ++i) {
        if (text[i - 1] == ' ' && is_punct(text[i])) a.pop_back();
        a += text[i];
    }
    // 2: " ' " becomes "'"
    std::string src = a;
    std::string b(1, src[0]);
    for (size_t i = 1; i < src.size(); ++i) {
        const char x = src[i];
        if (x == '\'' && i + 1 < src.size() && src[i - 1] == ' ' && src[i + 1] == ' ') {
            b.pop_back();
            src[++i] = '\0';  // the space after is dropped, and is no space for the next check
        }
        b += x;
    }
    // 3: " 's" " 'm" " 're" " 've" lose the space (" 't" " 'd" " 'll" keep it)
    std::string c(1, b[0]);
    for (size_t i = 1; i < b.size(); ++i) {
        const char x = b[i];
        if (b[i - 1] == ' ' && x == '\'' && i + 1 < b.size()) {
            const char x1 = b[i + 1];
            if (x1 == 's' || x1 == 'm') {
                c.pop_back();
            } else if (x1 != 't' && x1 != 'd' && i + 2 < b.size()) {
                const char x2 = b[i + 2];
                if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) c.pop_back();
            }
        }
        c += x;
    }
    return c;
}

std::string join_pieces(const Vocab& vocab, std::span<const TokenId> ids, bool remove_special,
                        const std::vector<std::string>& pieces_with_special, bool unparse_special) {
    bool remove_space = vocab.add_space_prefix();
    if (remove_special && vocab.add_bos() && !ids.empty() && ids.front() == vocab.special().bos) {
        remove_space = false;
        ids = ids.subspan(1);
    }
    if (remove_special && vocab.add_eos() && !ids.empty() && ids.back() == vocab.special().eos) {
        ids = ids.first(ids.size() - 1);
    }
    std::string text;
    for (TokenId id : ids) {
        const TokenData& t = vocab.token(id);
        std::string_view piece = (!unparse_special && (t.attr & (kTokenUnknown | kTokenControl)))
                                     ? std::string_view()
                                     : std::string_view(pieces_with_special[static_cast<size_t>(id)]);
        if (remove_space && !piece.empty() && piece.front() == ' ') piece.remove_prefix(1);
        remove_space = false;
        text.append(piece);
    }
    return vocab.clean_spaces() ? clean_up_spaces(text) : text;
}

}  // namespace pocket
