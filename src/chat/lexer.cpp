// Jinja lexer. Whitespace control is resolved here, so the parser sees final text:
//  - `{%-` / `{{-` / `{#-` strip all whitespace before the tag, `-%}` / `-}}` / `-#}` after it;
//  - trim_blocks: the first newline after a block or comment tag is removed;
//  - lstrip_blocks: spaces and tabs from the start of a line up to a block or comment tag are
//    removed (`{%+` turns this off for one tag).
#include "chat/lexer.hpp"

#include "pocket/error.hpp"

#include <cctype>
#include <cstdint>

namespace pocket::jinja {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

class Lexer {
public:
    explicit Lexer(std::string_view src) : src_(src) {}

    std::vector<Token> run() {
        size_t pos = 0;
        while (pos < src_.size()) {
            size_t tag = find_tag(pos);
            std::string text(src_.substr(pos, (tag == npos ? src_.size() : tag) - pos));
            if (strip_next_) {
                size_t k = 0;
                while (k < text.size() && is_space(text[k])) ++k;
                text.erase(0, k);
                strip_next_ = false;
            }
            if (tag == npos) {
                emit_text(std::move(text), pos);
                break;
            }
            char kind = src_[tag + 1];
            char mod = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
            if (mod == '-') {
                while (!text.empty() && is_space(text.back())) text.pop_back();
            } else if ((kind == '%' || kind == '#') && mod != '+') {
                lstrip_line(text);
            }
            emit_text(std::move(text), pos);
            size_t body = tag + 2 + ((mod == '-' || mod == '+') ? 1 : 0);
            if (kind == '#') pos = lex_comment(tag, body);
            else if (kind == '%' && is_raw_tag(body)) pos = lex_raw(tag, body);
            else pos = lex_tag(tag, body, kind == '{');
        }
        out_.push_back({Token::Kind::Eof, "", src_.size()});
        return std::move(out_);
    }

private:
    static constexpr size_t npos = std::string_view::npos;

    [[noreturn]] void fail(size_t offset, const std::string& what) const {
        throw Error("chat template: syntax error at {}: {}", describe_position(src_, offset), what);
    }

    size_t find_tag(size_t from) const {
        for (size_t i = from; i + 1 < src_.size(); ++i)
            if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
        return npos;
    }

    // lstrip_blocks: drop the spaces/tabs between the last line start and the tag.
    void lstrip_line(std::string& text) const {
        size_t nl = text.rfind('\n');
        size_t from = nl == std::string::npos ? 0 : nl + 1;
        if (nl == std::string::npos && !line_start_) return;  // the tag is not first on its line
        for (size_t k = from; k < text.size(); ++k)
            if (text[k] != ' ' && text[k] != '\t') return;
        text.erase(from);
    }

    void emit_text(std::string text, size_t offset) {
        // Whether the next text starts a line decides lstrip_blocks for a tag in it.
        if (!text.empty()) out_.push_back({Token::Kind::Text, std::move(text), offset});
    }

    // After a tag ending at `end` (one past `}`): trim_blocks and the `-` modifier.
    size_t after_tag(size_t end, char mod, bool block_like) {
        line_start_ = false;
        if (mod == '-') {
            strip_next_ = true;
            size_t k = end;
            while (k < src_.size() && is_space(src_[k])) ++k;
            line_start_ = k > end && src_[k - 1] == '\n';
        } else if (block_like && mod != '+' && end < src_.size() && src_[end] == '\n') {
            ++end;
            line_start_ = true;
        }
        return end;
    }

    size_t lex_comment(size_t tag, size_t body) {
        size_t close = src_.find("#}", body);
        if (close == npos) fail(tag, "unterminated comment");
        char mod = close > body && (src_[close - 1] == '-' || src_[close - 1] == '+') ? src_[close - 1] : '\0';
        return after_tag(close + 2, mod, true);
    }

    // `{% raw %}`: everything up to `{% endraw %}` is text.
    bool is_raw_tag(size_t p) const {
        while (p < src_.size() && is_space(src_[p])) ++p;
        if (src_.substr(p, 3) != "raw") return false;
        p += 3;
        while (p < src_.size() && is_space(src_[p])) ++p;
        if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
        return src_.substr(p, 2) == "%}";
    }

    size_t lex_raw(size_t tag, size_t body) {
        size_t close = src_.find("%}", body);
        char mod = src_[close - 1];
        size_t text_start = after_tag(close + 2, mod == '-' || mod == '+' ? mod : '\0', true);
        bool strip = strip_next_;
        strip_next_ = false;
        for (size_t p = find_tag(text_start); p != npos; p = find_tag(p + 1)) {
            if (src_[p + 1] != '%') continue;
            size_t q = p + 2;
            char open_mod = q < src_.size() ? src_[q] : '\0';
            if (open_mod == '-' || open_mod == '+') ++q;
            while (q < src_.size() && is_space(src_[q])) ++q;
            if (src_.substr(q, 6) != "endraw") continue;
            q += 6;
            while (q < src_.size() && is_space(src_[q])) ++q;
            char end_mod = '\0';
            if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) end_mod = src_[q++];
            if (src_.substr(q, 2) != "%}") continue;
            std::string text(src_.substr(text_start, p - text_start));
            if (strip) {
                size_t k = 0;
                while (k < text.size() && is_space(text[k])) ++k;
                text.erase(0, k);
            }
            if (open_mod == '-')
                while (!text.empty() && is_space(text.back())) text.pop_back();
            else if (open_mod != '+')
                lstrip_line(text);
            emit_text(std::move(text), text_start);
            return after_tag(q + 2, end_mod, true);
        }
        fail(tag, "unterminated raw block (missing {% endraw %})");
    }

    size_t lex_tag(size_t tag, size_t p, bool is_var) {
        out_.push_back({is_var ? Token::Kind::VarBegin : Token::Kind::BlockBegin, "", tag});
        int depth = 0;
        const char close = is_var ? '}' : '%';
        for (;;) {
            while (p < src_.size() && is_space(src_[p])) ++p;
            if (p >= src_.size()) fail(tag, is_var ? "unterminated '{{'" : "unterminated '{%'");
            // An end marker only counts outside brackets, so `{{ {'a': {}}}` parses.
            if (depth == 0) {
                char mod = (src_[p] == '-' || src_[p] == '+') ? src_[p] : '\0';
                size_t q = p + (mod ? 1 : 0);
                if (q + 1 < src_.size() && src_[q] == close && src_[q + 1] == '}' && !(is_var && mod == '+')) {
                    out_.push_back({is_var ? Token::Kind::VarEnd : Token::Kind::BlockEnd, "", p});
                    return after_tag(q + 2, mod, !is_var);
                }
            }
            p = lex_one(p, depth);
        }
    }

    size_t lex_one(size_t p, int& depth) {
        char c = src_[p];
        if (is_name_start(c)) {
            size_t e = p;
            while (e < src_.size() && is_name_char(src_[e])) ++e;
            out_.push_back({Token::Kind::Name, std::string(src_.substr(p, e - p)), p});
            return e;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) return lex_number(p);
        if (c == '\'' || c == '"') return lex_string(p);
        static const char* const two[] = {"//", "**", "==", "!=", "<=", ">="};
        for (const char* op : two)
            if (src_.substr(p, 2) == op) {
                out_.push_back({Token::Kind::Op, op, p});
                return p + 2;
            }
        if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) != npos) {
            if (c == '(' || c == '[' || c == '{') ++depth;
            if (c == ')' || c == ']' || c == '}') --depth;
            out_.push_back({Token::Kind::Op, std::string(1, c), p});
            return p + 1;
        }
        fail(p, std::string("unexpected character '") + c + "'");
    }

    size_t lex_number(size_t p) {
        size_t e = p;
        auto digits = [&] {
            while (e < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[e])) || src_[e] == '_')) ++e;
        };
        digits();
        bool is_float = false;
        // `x.0.1`: after a '.', an integer is an attribute index, never a float.
        bool after_dot = !out_.empty() && out_.back().kind == Token::Kind::Op && out_.back().text == ".";
        if (!after_dot && e + 1 < src_.size() && src_[e] == '.' && std::isdigit(static_cast<unsigned char>(src_[e + 1]))) {
            ++e;
            digits();
            is_float = true;
        }
        if (!after_dot && e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
            size_t k = e + 1;
            if (k < src_.size() && (src_[k] == '+' || src_[k] == '-')) ++k;
            if (k < src_.size() && std::isdigit(static_cast<unsigned char>(src_[k]))) {
                e = k;
                digits();
                is_float = true;
            }
        }
        std::string text;
        for (size_t k = p; k < e; ++k)
            if (src_[k] != '_') text += src_[k];
        out_.push_back({is_float ? Token::Kind::Float : Token::Kind::Int, text, p});
        return e;
    }

    size_t lex_string(size_t p) {
        char quote = src_[p];
        std::string value;
        size_t i = p + 1;
        for (;;) {
            if (i >= src_.size()) fail(p, "unterminated string literal");
            char c = src_[i];
            if (c == quote) break;
            if (c != '\\') {
                value += c;
                ++i;
                continue;
            }
            if (i + 1 >= src_.size()) fail(p, "unterminated string literal");
            char e = src_[i + 1];
            i += 2;
            switch (e) {
                case 'n': value += '\n'; break;
                case 't': value += '\t'; break;
                case 'r': value += '\r'; break;
                case '0': value += '\0'; break;
                case 'a': value += '\a'; break;
                case 'b': value += '\b'; break;
                case 'f': value += '\f'; break;
                case 'v': value += '\v'; break;
                case '\\': value += '\\'; break;
                case '\'': value += '\''; break;
                case '"': value += '"'; break;
                case '\n': break;  // line continuation
                case 'x':
                case 'u':
                case 'U': {
                    size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
                    uint32_t cp = 0;
                    for (size_t k = 0; k < n; ++k, ++i) {
                        if (i >= src_.size() || !std::isxdigit(static_cast<unsigned char>(src_[i])))
                            fail(p, std::string("bad \\") + e + " escape in string literal");
                        char h = static_cast<char>(std::tolower(static_cast<unsigned char>(src_[i])));
                        cp = cp * 16 + static_cast<uint32_t>(h <= '9' ? h - '0' : h - 'a' + 10);
                    }
                    if (cp > 0x10FFFF) fail(p, "escape beyond U+10FFFF in string literal");
                    append_utf8(value, cp);
                    break;
                }
                default:  // Python keeps unknown escapes as written
                    value += '\\';
                    value += e;
            }
        }
        out_.push_back({Token::Kind::String, std::move(value), p});
        return i + 1;
    }

    std::string_view src_;
    std::vector<Token> out_;
    bool strip_next_ = false;  // a `-` end modifier: strip the next text's leading whitespace
    bool line_start_ = true;   // the next text begins a line (for lstrip_blocks)
};

}  // namespace

std::string normalize_source(std::string_view source) {
    std::string out;
    out.reserve(source.size());
    for (size_t i = 0; i < source.size(); ++i) {
        if (source[i] == '\r') {
            out += '\n';
            if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
        } else {
            out += source[i];
        }
    }
    // keep_trailing_newline=False: exactly one trailing newline goes.
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

std::string describe_position(std::string_view source, size_t offset) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < offset && i < source.size(); ++i) {
        if (source[i] == '\n') {
            ++line;
            col = 1;
        } else if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) {
            ++col;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(col);
}

}  // namespace pocket::jinja
