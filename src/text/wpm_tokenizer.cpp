#include "text/wpm_tokenizer.hpp"

#include "text/space_escape.hpp"
#include "text/unicode_props.hpp"
#include "text/utf8.hpp"

namespace pocket {

namespace {

// BERT's "Chinese character" ranges, including HF's 0x2B920 typo that llama.cpp mirrors.
bool is_chinese_char(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

}  // namespace

std::vector<std::string> WpmTokenizer::split_words(std::string_view text, bool lowercase, bool strip_accents) {
    std::vector<std::string> words(1);
    for (uint32_t cpt : utf8::decode(text)) {
        // llama.cpp's "NFD" keeps only the first code point of each decomposition.
        if (strip_accents) cpt = unicode::nfd_first(cpt);
        if (unicode::is_whitespace(cpt)) {
            if (!words.back().empty()) words.emplace_back();
            continue;
        }
        const unicode::Category cat = unicode::category(cpt);
        if (cpt == 0 || cpt == utf8::kReplacement || cat == unicode::Category::Control) continue;
        if (strip_accents && cat == unicode::Category::Mark) continue;

        const std::string s = utf8::encode(lowercase ? unicode::to_lower(cpt) : cpt);
        if (cat == unicode::Category::Punctuation || (cpt < 0x7F && cat == unicode::Category::Symbol) ||
            is_chinese_char(cpt)) {
            if (!words.back().empty()) words.emplace_back();
            words.back() = s;
            words.emplace_back();
        } else {
            words.back() += s;
        }
    }
    if (words.back().empty()) words.pop_back();
    return words;
}

void WpmTokenizer::encode(std::string_view text, std::vector<TokenId>& out) const {
    const size_t max_len = vocab_.max_token_bytes();
    for (const std::string& word : split_words(text, vocab_.lowercase(), vocab_.strip_accents())) {
        if (word.empty()) continue;
        const std::string w = std::string(kSpaceMarker) + word;  // the phantom space that marks a word start
        const size_t n = w.size();
        const size_t before = out.size();
        for (size_t i = 0; i < n;) {
            // Longest piece first; matching is byte-wise, as in llama.cpp.
            size_t j = std::min(n, i + max_len + 1);
            TokenId id = kNoToken;
            for (; j > i; --j) {
                id = vocab_.find(std::string_view(w).substr(i, j - i));
                if (id != kNoToken) break;
            }
            if (id == kNoToken) {  // the word cannot be covered: it becomes one UNK
                out.resize(before);
                break;
            }
            out.push_back(id);
            i = j;
        }
        if (out.size() == before) out.push_back(vocab_.special().unk);
    }
}

}  // namespace pocket
