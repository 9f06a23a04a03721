#include "text/unicode_props.hpp"

#include <utf8proc.h>

namespace pocket::unicode {

Category category(uint32_t cpt) {
    if (cpt > 0x10FFFF) return Category::Undefined;
    switch (utf8proc_category(static_cast<utf8proc_int32_t>(cpt))) {
        case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
        case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
            return Category::Letter;
        case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
            return Category::Mark;
        case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
            return Category::Number;
        case UTF8PROC_CATEGORY_PC: case UTF8PROC_CATEGORY_PD: case UTF8PROC_CATEGORY_PS: case UTF8PROC_CATEGORY_PE:
        case UTF8PROC_CATEGORY_PI: case UTF8PROC_CATEGORY_PF: case UTF8PROC_CATEGORY_PO:
            return Category::Punctuation;
        case UTF8PROC_CATEGORY_SM: case UTF8PROC_CATEGORY_SC: case UTF8PROC_CATEGORY_SK: case UTF8PROC_CATEGORY_SO:
            return Category::Symbol;
        case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
            return Category::Separator;
        case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_CS: case UTF8PROC_CATEGORY_CO:
            return Category::Control;
        default:
            return Category::Undefined;
    }
}

bool is_whitespace(uint32_t cpt) {
    return (cpt >= 0x09 && cpt <= 0x0D) || cpt == 0x20 || cpt == 0x85 || cpt == 0xA0 || cpt == 0x1680 ||
           (cpt >= 0x2000 && cpt <= 0x200A) || cpt == 0x2028 || cpt == 0x2029 || cpt == 0x202F || cpt == 0x205F ||
           cpt == 0x3000;
}

uint32_t to_lower(uint32_t cpt) {
    if (cpt > 0x10FFFF) return cpt;
    return static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cpt)));
}

uint32_t nfd_first(uint32_t cpt) {
    if (cpt > 0x10FFFF || (cpt >= 0xD800 && cpt <= 0xDFFF)) return cpt;
    utf8proc_int32_t out[8];
    int last_boundclass = 0;
    const auto n = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(cpt), out, 8, UTF8PROC_DECOMPOSE, &last_boundclass);
    return n > 0 ? static_cast<uint32_t>(out[0]) : cpt;
}

}  // namespace pocket::unicode
