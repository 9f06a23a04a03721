#include "text/pre_tokenizer.hpp"

#include "pocket/error.hpp"
#include "text/regex_stand_in.hpp"
#include "text/utf8.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <optional>

namespace pocket {

struct PreTokenizer::Pattern {
    pcre2_code* code = nullptr;
    std::string source;
    bool uses_properties = false;  // \p{..}: matched against stand-ins for newer characters
    ~Pattern() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) {
    for (const auto& source : patterns) {
        int error = 0;
        PCRE2_SIZE error_offset = 0;
        // DOLLAR_ENDONLY: "$" means the end of the piece, as in ECMAScript, not "before a final \n".
        pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                         PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &error, &error_offset, nullptr);
        if (!code) {
            PCRE2_UCHAR message[256];
            pcre2_get_error_message(error, message, sizeof(message));
            throw Error("pre-tokenizer regex does not compile at offset {}: {} ({})", error_offset,
                        reinterpret_cast<const char*>(message), source);
        }
        pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // best effort: falls back to the interpreter
        auto p = std::make_unique<Pattern>();
        p->code = code;
        p->source = source;
        p->uses_properties = source.find("\\p{") != std::string::npos;
        patterns_.push_back(std::move(p));
    }
}

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

namespace {

// The text as one regex sees it, and where each code point starts in it (with one entry past
// the end), so that match offsets map back to code points.
struct Subject {
    std::string bytes;
    std::vector<size_t> byte_at;

    Subject(const std::vector<uint32_t>& cpts, uint32_t (*stand_in)(uint32_t)) {
        byte_at.reserve(cpts.size() + 1);
        for (uint32_t cpt : cpts) {
            byte_at.push_back(bytes.size());
            utf8::append(bytes, stand_in(cpt));
        }
        byte_at.push_back(bytes.size());
    }
    size_t cpt_index(size_t byte) const {
        return static_cast<size_t>(std::lower_bound(byte_at.begin(), byte_at.end(), byte) - byte_at.begin());
    }
};

struct MatchData {
    pcre2_match_data* data;
    explicit MatchData(const pcre2_code* code) : data(pcre2_match_data_create_from_pattern(code, nullptr)) {}
    ~MatchData() { pcre2_match_data_free(data); }
};

}  // namespace

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
    const std::vector<uint32_t> cpts = utf8::decode(text);

    std::optional<Subject> with_stand_ins, literal;  // built when a pattern first needs one

    // Pieces as [begin, end) code point ranges.
    std::vector<std::pair<size_t, size_t>> pieces;
    if (!cpts.empty()) pieces.emplace_back(0, cpts.size());

    for (const auto& pattern : patterns_) {
        std::optional<Subject>& slot = pattern->uses_properties ? with_stand_ins : literal;
        if (!slot) slot.emplace(cpts, pattern->uses_properties ? regex_stand_in : regex_literal_stand_in);
        const Subject& subject = *slot;
        const auto& byte_at = subject.byte_at;
        auto cpt_index = [&](size_t byte) { return subject.cpt_index(byte); };
        MatchData match(pattern->code);
        std::vector<std::pair<size_t, size_t>> next;
        next.reserve(pieces.size());
        for (auto [begin, end] : pieces) {
            // The piece alone is the subject, so that lookaheads and "$" stop at its end.
            const auto* base = reinterpret_cast<PCRE2_SPTR>(subject.bytes.data() + byte_at[begin]);
            const size_t length = byte_at[end] - byte_at[begin];
            size_t pos = 0;   // bytes into the piece
            size_t done = 0;  // bytes of the piece already handed on
            while (pos < length) {
                const int rc = pcre2_match(pattern->code, base, length, pos, PCRE2_NO_UTF_CHECK, match.data, nullptr);
                if (rc == PCRE2_ERROR_NOMATCH) break;
                if (rc < 0) {
                    PCRE2_UCHAR message[256];
                    pcre2_get_error_message(rc, message, sizeof(message));
                    throw Error("pre-tokenizer regex failed: {} ({})", reinterpret_cast<const char*>(message),
                                pattern->source);
                }
                const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match.data);
                const size_t m_begin = ov[0], m_end = ov[1];
                if (m_end == m_begin) {
                    // An empty match splits nothing; step over one code point.
                    pos = byte_at[cpt_index(byte_at[begin] + pos) + 1] - byte_at[begin];
                    continue;
                }
                if (m_begin > done) next.emplace_back(cpt_index(byte_at[begin] + done), cpt_index(byte_at[begin] + m_begin));
                next.emplace_back(cpt_index(byte_at[begin] + m_begin), cpt_index(byte_at[begin] + m_end));
                done = pos = m_end;
            }
            if (done < length) next.emplace_back(cpt_index(byte_at[begin] + done), end);
        }
        pieces = std::move(next);
    }

    std::vector<std::string> words;
    words.reserve(pieces.size());
    for (auto [begin, end] : pieces) {
        std::string word;
        for (size_t i = begin; i < end; ++i) utf8::append(word, cpts[i]);
        words.push_back(std::move(word));
    }
    return words;
}

}  // namespace pocket
