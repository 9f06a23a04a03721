#pragma once
// The syntax tree the parser builds and the evaluator walks. One struct per family, with a
// kind tag: fields unused by a kind stay empty. Every node keeps its source offset so that
// runtime errors can name a position too.
#include "chat/value.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace pocket::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
    enum class Kind {
        Literal,   // value
        Name,      // name
        List,      // items
        Tuple,     // items (evaluates to a list)
        Dict,      // pairs
        Attr,      // a.name
        Index,     // a[b]
        Slice,     // a[b:c:d] (b, c, d may be null)
        Call,      // a(args, kwargs)
        Filter,    // a | name(args, kwargs); a is null inside {% filter %}
        Test,      // a is [not] name(args)
        Unary,     // op a: "-", "+", "not"
        Binary,    // a op b: arithmetic, comparisons, "and", "or", "in", "not in", "~"
        Cond,      // b if a else c (c may be null)
    };
    Kind kind;
    size_t offset = 0;
    Value value;
    std::string name;  // Name, Attr, Filter, Test; the operator for Unary/Binary
    ExprPtr a, b, c, d;
    std::vector<ExprPtr> items;  // List/Tuple items, call/filter/test positional args
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    std::vector<std::pair<ExprPtr, ExprPtr>> pairs;
    bool negated = false;  // Test: `is not`

    Expr(Kind k, size_t off) : kind(k), offset(off) {}
};

struct MacroParam {
    std::string name;
    ExprPtr default_value;  // may be null
};

struct Stmt {
    enum class Kind {
        Text,       // text
        Output,     // {{ expr }}
        If,         // branches (cond, body); else_body
        For,        // targets in expr [if cond]: body; else_body
        Set,        // targets (or target expr.attr) = expr, or a block set with body
        Macro,      // name(params): body
        CallBlock,  // {% call(params) expr %} body
        FilterBlock,// {% filter expr %} body  (expr is a Filter chain with a null operand)
        Break,
        Continue,
        Do,         // {% do expr %}
        Block,      // a body rendered in place (generation blocks)
    };
    Kind kind;
    size_t offset = 0;
    std::string text;
    ExprPtr expr;                  // Output, For (iterable), Set (value), CallBlock, FilterBlock, Do
    ExprPtr cond;                  // For filter
    ExprPtr attr_target;           // Set: `ns.x` (the object expression); attr name in `text`
    std::vector<std::string> targets;  // For / Set names
    std::vector<std::pair<ExprPtr, Body>> branches;
    Body body, else_body;
    std::vector<MacroParam> params;  // Macro, CallBlock

    Stmt(Kind k, size_t off) : kind(k), offset(off) {}
};

// A parsed template: its normalized source (for error positions) and its statements.
struct Program {
    std::string source;
    Body body;
};

}  // namespace pocket::jinja
