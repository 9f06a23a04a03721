#include "text/regex_stand_in.hpp"

#include "text/unicode_props.hpp"
#include "text/utf8.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <atomic>
#include <memory>

namespace pocket {

namespace {

constexpr uint32_t kUnassigned = 0xFFFF;  // Cn everywhere

// What PCRE2 is asked: is this code point unassigned in its Unicode tables?
bool pcre2_unassigned(uint32_t cpt) {
    struct Pattern {
        pcre2_code* code = nullptr;
        Pattern() {
            int error = 0;
            PCRE2_SIZE offset = 0;
            code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>("\\p{Cn}"), PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_ANCHORED, &error, &offset, nullptr);
        }
        ~Pattern() { pcre2_code_free(code); }
    };
    static const Pattern pattern;
    const std::string s = utf8::encode(cpt);
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(pattern.code, nullptr);
    const int rc = pcre2_match(pattern.code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, match, nullptr);
    pcre2_match_data_free(match);
    return rc > 0;
}

uint32_t compute_stand_in(uint32_t cpt) {
    if (cpt == 0x180E) return 0x200B;  // Mongolian vowel separator: Cf, not whitespace (PCRE2 \h says it is)
    if (!pcre2_unassigned(cpt)) return cpt;
    switch (unicode::category(cpt)) {
        case unicode::Category::Letter: return 0x00AA;       // FEMININE ORDINAL INDICATOR, Lo
        case unicode::Category::Number: return 0x0660;       // ARABIC-INDIC DIGIT ZERO, Nd
        case unicode::Category::Mark: return 0x0300;         // COMBINING GRAVE ACCENT, Mn
        case unicode::Category::Punctuation: return 0x00A1;  // INVERTED EXCLAMATION MARK, Po
        case unicode::Category::Symbol: return 0x00A6;       // BROKEN BAR, So
        case unicode::Category::Separator: return 0x2000;    // EN QUAD, Zs
        case unicode::Category::Control: return 0x200B;      // ZERO WIDTH SPACE, Cf
        case unicode::Category::Undefined: return cpt;
    }
    return cpt;
}

}  // namespace

uint32_t regex_literal_stand_in(uint32_t cpt) {
    if ((cpt >= 0xD800 && cpt <= 0xDFFF) || cpt > 0x10FFFF) return kUnassigned;  // PCRE2 takes no surrogates
    return cpt == 0x180E ? 0x200B : cpt;
}

uint32_t regex_stand_in(uint32_t cpt) {
    if (cpt < 0x80) return cpt;
    if ((cpt >= 0xD800 && cpt <= 0xDFFF) || cpt > 0x10FFFF) return kUnassigned;
    // Answers are cached per code point; 0 means not yet known. Races only recompute.
    static const std::unique_ptr<std::atomic<uint32_t>[]> cache(new std::atomic<uint32_t>[0x110000]());
    std::atomic<uint32_t>& slot = cache[cpt];
    uint32_t known = slot.load(std::memory_order_relaxed);
    if (known == 0) {
        known = compute_stand_in(cpt);
        slot.store(known, std::memory_order_relaxed);
    }
    return known;
}

}  // namespace pocket
