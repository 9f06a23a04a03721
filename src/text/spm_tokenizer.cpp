#include "text/spm_tokenizer.hpp"

#include "pocket/error.hpp"
#include "text/pair_merger.hpp"
#include "text/space_escape.hpp"

#include <fmt/format.h>

namespace pocket {

SpmTokenizer::SpmTokenizer(const Vocab& vocab) : vocab_(vocab) {
    // Byte fallback: "<0xXX>", or else the byte itself as a one-byte token.
    for (int b = 0; b < 256; ++b) {
        TokenId id = vocab.find(fmt::format("<0x{:02X}>", b));
        if (id == kNoToken) id = vocab.find(std::string(1, static_cast<char>(b)));
        byte_tokens_[b] = id;
    }
}

TokenId SpmTokenizer::byte_token(unsigned char byte) const {
    const TokenId id = byte_tokens_[byte];
    if (id == kNoToken)
        throw Error("{}: the text holds a character this model cannot encode: its vocabulary has no token for the byte 0x{:02X} "
                    "(no <0x{:02X}> byte-fallback token)", vocab_.source().empty() ? "the model" : vocab_.source(), byte, byte);
    return id;
}

void SpmTokenizer::encode(std::string_view text, bool prefix_space, std::vector<TokenId>& out) const {
    std::string escaped;
    escaped.reserve(text.size() + 3);
    if (prefix_space) escaped.append(kSpaceMarker);
    append_escaped_spaces(escaped, text);

    // Pieces are adjacent views into `escaped`, so a pair's text is one contiguous view.
    auto rank = [&](std::string_view left, std::string_view right) -> std::optional<float> {
        const TokenId id = vocab_.find(std::string_view(left.data(), left.size() + right.size()));
        if (id == kNoToken) return std::nullopt;
        return -vocab_.token(id).score;  // the highest score merges first
    };
    // Every merged piece is a token by construction; single characters may not be.
    auto emit = [&](std::string_view piece) {
        const TokenId id = vocab_.find(piece);
        if (id != kNoToken) {
            out.push_back(id);
            return;
        }
        for (char c : piece) out.push_back(byte_token(static_cast<unsigned char>(c)));
    };
    merge_pairs(std::string_view(escaped), rank, emit);
}

}  // namespace pocket
