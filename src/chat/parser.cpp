// Recursive-descent Jinja parser. The expression grammar follows Jinja's precedence, lowest
// first: `x if c else y`, or, and, not, comparisons and `in`, + -, ~, * / // %, **, unary
// - +, then primaries with postfix `.attr`, `[i]`, `[a:b:c]`, `(...)`, `| filter`, `is test`.
#include "chat/parser.hpp"

#include "chat/lexer.hpp"
#include "pocket/error.hpp"

#include <initializer_list>

namespace pocket::jinja {
namespace {

using TK = Token::Kind;

class Parser {
public:
    Parser(const std::string& src, std::vector<Token> tokens) : src_(src), toks_(std::move(tokens)) {}

    Body parse_all() {
        std::string end;
        Body body = parse_until({}, end);
        return body;
    }

private:
    // --- token helpers -------------------------------------------------------------------
    const Token& peek(size_t ahead = 0) const {
        size_t i = pos_ + ahead;
        return i < toks_.size() ? toks_[i] : toks_.back();
    }
    const Token& next() {
        const Token& t = toks_[pos_];
        if (pos_ + 1 < toks_.size()) ++pos_;
        return t;
    }
    bool is_op(std::string_view op, size_t ahead = 0) const {
        return peek(ahead).kind == TK::Op && peek(ahead).text == op;
    }
    bool is_name(std::string_view name, size_t ahead = 0) const {
        return peek(ahead).kind == TK::Name && peek(ahead).text == name;
    }
    bool skip_op(std::string_view op) {
        if (!is_op(op)) return false;
        next();
        return true;
    }
    bool skip_name(std::string_view name) {
        if (!is_name(name)) return false;
        next();
        return true;
    }

    static std::string describe(const Token& t) {
        switch (t.kind) {
            case TK::Text: return "text";
            case TK::VarBegin: return "'{{'";
            case TK::VarEnd: return "'}}'";
            case TK::BlockBegin: return "'{%'";
            case TK::BlockEnd: return "'%}'";
            case TK::Name: return "'" + t.text + "'";
            case TK::Int:
            case TK::Float: return "number " + t.text;
            case TK::String: return "string literal";
            case TK::Op: return "'" + t.text + "'";
            case TK::Eof: return "end of template";
        }
        return "?";
    }

    [[noreturn]] void fail(const Token& at, const std::string& what) const {
        throw Error("chat template: syntax error at {}: {}", describe_position(src_, at.offset), what);
    }
    [[noreturn]] void unexpected(const std::string& expected) const {
        fail(peek(), "expected " + expected + ", got " + describe(peek()));
    }
    void expect_op(std::string_view op) {
        if (!skip_op(op)) unexpected("'" + std::string(op) + "'");
    }
    std::string expect_name() {
        if (peek().kind != TK::Name) unexpected("a name");
        return next().text;
    }
    void expect_block_end() {
        if (peek().kind != TK::BlockEnd) unexpected("'%}'");
        next();
    }

    // Nesting guard: every recursive rule holds one of these.
    struct Depth {
        Parser& p;
        explicit Depth(Parser& parser) : p(parser) {
            if (++p.depth_ > kMaxParseDepth) p.fail(p.peek(), "template nested too deeply");
        }
        ~Depth() { --p.depth_; }
    };

    // --- statements ----------------------------------------------------------------------
    // Parses until a `{% end %}` whose keyword is in `ends` (consumed up to and including the
    // keyword; the caller reads the rest of that tag). `which` receives the keyword.
    Body parse_until(std::initializer_list<std::string_view> ends, std::string& which) {
        Depth guard(*this);
        Body body;
        size_t start = peek().offset;
        for (;;) {
            const Token& t = peek();
            if (t.kind == TK::Eof) {
                if (ends.size() == 0) return body;
                std::string list;
                for (auto e : ends) list += (list.empty() ? "'" : " or '") + std::string(e) + "'";
                fail(t, "unexpected end of template, expected " + list + " to close the block opened at " +
                            describe_position(src_, start));
            }
            if (t.kind == TK::Text) {
                auto s = std::make_unique<Stmt>(Stmt::Kind::Text, t.offset);
                s->text = next().text;
                body.push_back(std::move(s));
            } else if (t.kind == TK::VarBegin) {
                next();
                auto s = std::make_unique<Stmt>(Stmt::Kind::Output, t.offset);
                s->expr = parse_expr();
                if (peek().kind != TK::VarEnd) unexpected("'}}'");
                next();
                body.push_back(std::move(s));
            } else if (t.kind == TK::BlockBegin) {
                const Token& kw = peek(1);
                if (kw.kind == TK::Name)
                    for (auto e : ends)
                        if (kw.text == e) {
                            next();
                            which = next().text;
                            return body;
                        }
                next();
                body.push_back(parse_statement());
            } else {
                unexpected("text or a tag");
            }
        }
    }

    StmtPtr parse_statement() {
        const Token& kw = peek();
        if (kw.kind != TK::Name) unexpected("a statement keyword");
        const std::string word = kw.text;
        next();
        if (word == "if") return parse_if(kw.offset);
        if (word == "for") return parse_for(kw.offset);
        if (word == "set") return parse_set(kw.offset);
        if (word == "macro") return parse_macro(kw.offset);
        if (word == "call") return parse_call_block(kw.offset);
        if (word == "filter") return parse_filter_block(kw.offset);
        if (word == "break" || word == "continue") {
            if (loop_depth_ == 0) fail(kw, "'" + word + "' outside a for loop");
            expect_block_end();
            return std::make_unique<Stmt>(word == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, kw.offset);
        }
        if (word == "do") {
            auto s = std::make_unique<Stmt>(Stmt::Kind::Do, kw.offset);
            s->expr = parse_expr();
            expect_block_end();
            return s;
        }
        if (word == "generation") {  // HF's marker for assistant-token masks: renders its body
            expect_block_end();
            auto s = std::make_unique<Stmt>(Stmt::Kind::Block, kw.offset);
            std::string end;
            s->body = parse_until({"endgeneration"}, end);
            expect_block_end();
            return s;
        }
        if (word.rfind("end", 0) == 0 || word == "elif" || word == "else")
            fail(kw, "unexpected '" + word + "' (no block open that it could close)");
        fail(kw, "unknown or unsupported tag '" + word + "'");
    }

    StmtPtr parse_if(size_t offset) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::If, offset);
        ExprPtr cond = parse_expr();
        expect_block_end();
        for (;;) {
            std::string end;
            Body body = parse_until({"elif", "else", "endif"}, end);
            s->branches.emplace_back(std::move(cond), std::move(body));
            if (end == "elif") {
                cond = parse_expr();
                expect_block_end();
                continue;
            }
            expect_block_end();
            if (end == "else") {
                s->else_body = parse_until({"endif"}, end);
                expect_block_end();
            }
            return s;
        }
    }

    std::vector<std::string> parse_targets() {
        std::vector<std::string> names;
        bool paren = skip_op("(");
        do {
            names.push_back(expect_name());
        } while (skip_op(","));
        if (paren) expect_op(")");
        return names;
    }

    StmtPtr parse_for(size_t offset) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::For, offset);
        s->targets = parse_targets();
        if (!skip_name("in")) unexpected("'in'");
        // No conditional expression here: a trailing `if` filters the items.
        s->expr = parse_tuple_or(&Parser::parse_or);
        if (skip_name("if")) s->cond = parse_expr();
        if (is_name("recursive")) fail(peek(), "recursive for loops are not supported");
        expect_block_end();
        ++loop_depth_;
        std::string end;
        s->body = parse_until({"else", "endfor"}, end);
        --loop_depth_;
        expect_block_end();
        if (end == "else") {
            int saved = loop_depth_;
            loop_depth_ = 0;  // `break` in a for's else belongs to no loop of this for
            s->else_body = parse_until({"endfor"}, end);
            loop_depth_ = saved;
            expect_block_end();
        }
        return s;
    }

    StmtPtr parse_set(size_t offset) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::Set, offset);
        if (peek().kind == TK::Name && is_op(".", 1)) {
            // `{% set ns.attr = value %}`
            auto obj = std::make_unique<Expr>(Expr::Kind::Name, peek().offset);
            obj->name = next().text;
            next();
            s->attr_target = std::move(obj);
            s->text = expect_name();
        } else {
            s->targets = parse_targets();
        }
        if (skip_op("=")) {
            s->expr = parse_tuple_or(&Parser::parse_expr);
            expect_block_end();
            return s;
        }
        if (s->attr_target || s->targets.size() != 1) unexpected("'='");
        // Block set: `{% set name %}...{% endset %}` captures the rendered body.
        expect_block_end();
        std::string end;
        s->body = parse_until({"endset"}, end);
        expect_block_end();
        return s;
    }

    std::vector<MacroParam> parse_params() {
        std::vector<MacroParam> params;
        expect_op("(");
        while (!is_op(")")) {
            MacroParam p;
            p.name = expect_name();
            if (skip_op("=")) p.default_value = parse_expr();
            params.push_back(std::move(p));
            if (!skip_op(",")) break;
        }
        expect_op(")");
        return params;
    }

    StmtPtr parse_macro(size_t offset) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::Macro, offset);
        s->text = expect_name();
        s->params = parse_params();
        expect_block_end();
        int saved = loop_depth_;
        loop_depth_ = 0;
        std::string end;
        s->body = parse_until({"endmacro"}, end);
        loop_depth_ = saved;
        if (peek().kind == TK::Name) next();  // `{% endmacro name %}`
        expect_block_end();
        return s;
    }

    StmtPtr parse_call_block(size_t offset) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::CallBlock, offset);
        if (is_op("(")) s->params = parse_params();
        s->expr = parse_expr();
        if (s->expr->kind != Expr::Kind::Call) fail(peek(), "{% call %} needs a macro call");
        expect_block_end();
        std::string end;
        s->body = parse_until({"endcall"}, end);
        expect_block_end();
        return s;
    }

    StmtPtr parse_filter_block(size_t offset) {
        auto s = std::make_unique<Stmt>(Stmt::Kind::FilterBlock, offset);
        ExprPtr chain;
        do {
            chain = parse_filter(std::move(chain));
        } while (skip_op("|"));
        s->expr = std::move(chain);
        expect_block_end();
        std::string end;
        s->body = parse_until({"endfilter"}, end);
        expect_block_end();
        return s;
    }

    // --- expressions ---------------------------------------------------------------------
    using Rule = ExprPtr (Parser::*)();

    // `a, b, c` without brackets (for `set` and `for ... in`) becomes a tuple.
    ExprPtr parse_tuple_or(Rule rule) {
        size_t off = peek().offset;
        ExprPtr first = (this->*rule)();
        if (!is_op(",")) return first;
        auto t = std::make_unique<Expr>(Expr::Kind::Tuple, off);
        t->items.push_back(std::move(first));
        while (skip_op(",")) {
            if (peek().kind == TK::BlockEnd || is_name("if")) break;
            t->items.push_back((this->*rule)());
        }
        return t;
    }

    ExprPtr binary(std::string op, ExprPtr l, ExprPtr r, size_t off) {
        auto e = std::make_unique<Expr>(Expr::Kind::Binary, off);
        e->name = std::move(op);
        e->a = std::move(l);
        e->b = std::move(r);
        return e;
    }

    ExprPtr parse_expr() {
        Depth guard(*this);
        size_t off = peek().offset;
        ExprPtr e = parse_or();
        while (skip_name("if")) {
            auto c = std::make_unique<Expr>(Expr::Kind::Cond, off);
            c->a = parse_or();
            c->b = std::move(e);
            if (skip_name("else")) c->c = parse_expr();
            e = std::move(c);
        }
        return e;
    }

    ExprPtr parse_or() {
        ExprPtr e = parse_and();
        while (is_name("or")) {
            size_t off = next().offset;
            e = binary("or", std::move(e), parse_and(), off);
        }
        return e;
    }

    ExprPtr parse_and() {
        ExprPtr e = parse_not();
        while (is_name("and")) {
            size_t off = next().offset;
            e = binary("and", std::move(e), parse_not(), off);
        }
        return e;
    }

    ExprPtr parse_not() {
        if (is_name("not")) {
            Depth guard(*this);
            auto e = std::make_unique<Expr>(Expr::Kind::Unary, next().offset);
            e->name = "not";
            e->a = parse_not();
            return e;
        }
        return parse_compare();
    }

    ExprPtr parse_compare() {
        ExprPtr e = parse_math1();
        for (;;) {
            size_t off = peek().offset;
            std::string op;
            if (peek().kind == TK::Op && (peek().text == "==" || peek().text == "!=" || peek().text == "<" ||
                                          peek().text == ">" || peek().text == "<=" || peek().text == ">=")) {
                op = next().text;
            } else if (is_name("in")) {
                next();
                op = "in";
            } else if (is_name("not") && is_name("in", 1)) {
                next();
                next();
                op = "not in";
            } else {
                return e;
            }
            e = binary(op, std::move(e), parse_math1(), off);
        }
    }

    ExprPtr parse_math1() {
        ExprPtr e = parse_concat();
        while (is_op("+") || is_op("-")) {
            const Token& t = next();
            e = binary(t.text, std::move(e), parse_concat(), t.offset);
        }
        return e;
    }

    ExprPtr parse_concat() {
        ExprPtr e = parse_math2();
        while (is_op("~")) {
            size_t off = next().offset;
            e = binary("~", std::move(e), parse_math2(), off);
        }
        return e;
    }

    ExprPtr parse_math2() {
        ExprPtr e = parse_pow();
        while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
            const Token& t = next();
            e = binary(t.text, std::move(e), parse_pow(), t.offset);
        }
        return e;
    }

    ExprPtr parse_pow() {
        ExprPtr e = parse_unary(true);
        while (is_op("**")) {
            size_t off = next().offset;
            e = binary("**", std::move(e), parse_unary(true), off);
        }
        return e;
    }

    ExprPtr parse_unary(bool with_filter) {
        Depth guard(*this);
        ExprPtr e;
        if (is_op("-") || is_op("+")) {
            const Token& t = next();
            e = std::make_unique<Expr>(Expr::Kind::Unary, t.offset);
            e->name = t.text;
            e->a = parse_unary(false);
        } else {
            e = parse_primary();
        }
        e = parse_postfix(std::move(e));
        if (with_filter) e = parse_filter_expr(std::move(e));
        return e;
    }

    ExprPtr parse_primary() {
        const Token& t = peek();
        switch (t.kind) {
            case TK::Name: {
                next();
                auto lit = [&](Value v) {
                    auto e = std::make_unique<Expr>(Expr::Kind::Literal, t.offset);
                    e->value = std::move(v);
                    return e;
                };
                if (t.text == "true" || t.text == "True") return lit(Value(true));
                if (t.text == "false" || t.text == "False") return lit(Value(false));
                if (t.text == "none" || t.text == "None") return lit(Value(nullptr));
                auto e = std::make_unique<Expr>(Expr::Kind::Name, t.offset);
                e->name = t.text;
                return e;
            }
            case TK::String: {
                auto e = std::make_unique<Expr>(Expr::Kind::Literal, t.offset);
                std::string s;
                while (peek().kind == TK::String) s += next().text;  // adjacent literals join
                e->value = Value(std::move(s));
                return e;
            }
            case TK::Int: {
                next();
                auto e = std::make_unique<Expr>(Expr::Kind::Literal, t.offset);
                try {
                    e->value = Value(static_cast<int64_t>(std::stoll(t.text)));
                } catch (const std::exception&) {
                    fail(t, "integer literal out of range");
                }
                return e;
            }
            case TK::Float: {
                next();
                auto e = std::make_unique<Expr>(Expr::Kind::Literal, t.offset);
                e->value = Value(std::stod(t.text));
                return e;
            }
            case TK::Op:
                if (t.text == "(") return parse_paren();
                if (t.text == "[") return parse_list();
                if (t.text == "{") return parse_dict();
                break;
            default: break;
        }
        unexpected("an expression");
    }

    ExprPtr parse_paren() {
        size_t off = next().offset;
        if (skip_op(")")) return std::make_unique<Expr>(Expr::Kind::Tuple, off);
        ExprPtr first = parse_expr();
        if (skip_op(")")) return first;
        auto t = std::make_unique<Expr>(Expr::Kind::Tuple, off);
        t->items.push_back(std::move(first));
        while (skip_op(",")) {
            if (is_op(")")) break;
            t->items.push_back(parse_expr());
        }
        expect_op(")");
        return t;
    }

    ExprPtr parse_list() {
        auto e = std::make_unique<Expr>(Expr::Kind::List, next().offset);
        while (!is_op("]")) {
            e->items.push_back(parse_expr());
            if (!skip_op(",")) break;
        }
        expect_op("]");
        return e;
    }

    ExprPtr parse_dict() {
        auto e = std::make_unique<Expr>(Expr::Kind::Dict, next().offset);
        while (!is_op("}")) {
            ExprPtr k = parse_expr();
            expect_op(":");
            e->pairs.emplace_back(std::move(k), parse_expr());
            if (!skip_op(",")) break;
        }
        expect_op("}");
        return e;
    }

    ExprPtr parse_postfix(ExprPtr e) {
        for (;;) {
            if (is_op(".")) {
                size_t off = next().offset;
                if (peek().kind == TK::Int) {
                    auto idx = std::make_unique<Expr>(Expr::Kind::Index, off);
                    auto lit = std::make_unique<Expr>(Expr::Kind::Literal, peek().offset);
                    lit->value = Value(static_cast<int64_t>(std::stoll(next().text)));
                    idx->a = std::move(e);
                    idx->b = std::move(lit);
                    e = std::move(idx);
                    continue;
                }
                auto a = std::make_unique<Expr>(Expr::Kind::Attr, off);
                a->a = std::move(e);
                a->name = expect_name();
                e = std::move(a);
            } else if (is_op("[")) {
                e = parse_subscript(std::move(e));
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    ExprPtr parse_subscript(ExprPtr obj) {
        size_t off = next().offset;
        ExprPtr start, stop, step;
        if (!is_op(":")) start = parse_expr();
        if (!skip_op(":")) {
            expect_op("]");
            auto e = std::make_unique<Expr>(Expr::Kind::Index, off);
            e->a = std::move(obj);
            e->b = std::move(start);
            return e;
        }
        if (!is_op(":") && !is_op("]")) stop = parse_expr();
        if (skip_op(":") && !is_op("]")) step = parse_expr();
        expect_op("]");
        auto e = std::make_unique<Expr>(Expr::Kind::Slice, off);
        e->a = std::move(obj);
        e->b = std::move(start);
        e->c = std::move(stop);
        e->d = std::move(step);
        return e;
    }

    void parse_args(Expr& e) {
        expect_op("(");
        while (!is_op(")")) {
            if (peek().kind == TK::Name && is_op("=", 1)) {
                std::string name = next().text;
                next();
                e.kwargs.emplace_back(std::move(name), parse_expr());
            } else {
                if (!e.kwargs.empty()) fail(peek(), "positional argument after keyword argument");
                e.items.push_back(parse_expr());
            }
            if (!skip_op(",")) break;
        }
        expect_op(")");
    }

    ExprPtr parse_call(ExprPtr callee) {
        auto e = std::make_unique<Expr>(Expr::Kind::Call, peek().offset);
        e->a = std::move(callee);
        parse_args(*e);
        return e;
    }

    // `| name`, `| name(args)`; `operand` is null inside {% filter %}.
    ExprPtr parse_filter(ExprPtr operand) {
        auto f = std::make_unique<Expr>(Expr::Kind::Filter, peek().offset);
        f->name = expect_name();
        while (skip_op(".")) f->name += "." + expect_name();
        f->a = std::move(operand);
        if (is_op("(")) parse_args(*f);
        return f;
    }

    ExprPtr parse_filter_expr(ExprPtr e) {
        for (;;) {
            if (skip_op("|")) {
                e = parse_filter(std::move(e));
            } else if (is_name("is")) {
                auto t = std::make_unique<Expr>(Expr::Kind::Test, next().offset);
                t->negated = skip_name("not");
                t->name = expect_name();
                t->a = std::move(e);
                if (is_op("(")) {
                    parse_args(*t);
                } else if ((peek().kind == TK::Name || peek().kind == TK::String || peek().kind == TK::Int ||
                            peek().kind == TK::Float || is_op("[") || is_op("{")) &&
                           !is_name("else") && !is_name("or") && !is_name("and") && !is_name("if")) {
                    // `x is divisibleby 3`, `x is sameas none`: one argument without brackets.
                    t->items.push_back(parse_postfix(parse_primary()));
                }
                e = std::move(t);
            } else if (is_op("(")) {
                e = parse_call(std::move(e));
            } else {
                return e;
            }
        }
    }

    const std::string& src_;
    std::vector<Token> toks_;
    size_t pos_ = 0;
    int depth_ = 0;
    int loop_depth_ = 0;
};

}  // namespace

std::shared_ptr<const Program> parse_template(std::string_view source) {
    auto prog = std::make_shared<Program>();
    prog->source = normalize_source(source);
    Parser parser(prog->source, tokenize(prog->source));
    prog->body = parser.parse_all();
    return prog;
}

}  // namespace pocket::jinja
