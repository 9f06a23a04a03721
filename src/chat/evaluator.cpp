// Tree-walking evaluator. Scoping follows Jinja: a for loop has its own frame (so `set` in a
// loop does not leak out, which is why templates use namespace()), `if` has none, and a macro
// runs in a fresh frame on top of the frames it was defined in.
#include "chat/evaluator.hpp"

#include "chat/builtins.hpp"
#include "chat/lexer.hpp"
#include "pocket/error.hpp"

#include <cmath>
#include <limits>

namespace pocket::jinja {
namespace {

using Frames = std::vector<std::shared_ptr<Object>>;

// Python's arithmetic on our values.
Value arith(const std::string& op, const Value& l, const Value& r) {
    if (l.is_undefined() || r.is_undefined())
        throw RuntimeError("undefined value used with '" + op + "'");
    auto bad = [&]() -> RuntimeError {
        return RuntimeError("unsupported operand types for " + op + ": '" + l.type_name() + "' and '" + r.type_name() + "'");
    };
    if (op == "+") {
        if (l.is_string() && r.is_string()) {
            if (l.as_string().size() + r.as_string().size() > kMaxOutputBytes) throw RuntimeError("string too long");
            return Value(l.as_string() + r.as_string());
        }
        if (l.is_array() && r.is_array()) {
            Array out = l.as_array();
            out.insert(out.end(), r.as_array().begin(), r.as_array().end());
            return Value(std::move(out));
        }
    }
    if (op == "*") {
        // str * int and list * int repeat, as in Python.
        const Value* seq = l.is_string() || l.is_array() ? &l : r.is_string() || r.is_array() ? &r : nullptr;
        const Value& n = seq == &l ? r : l;
        if (seq && (n.is_int() || n.is_bool())) {
            int64_t times = std::max<int64_t>(0, n.is_int() ? n.as_int() : n.as_bool());
            size_t unit = seq->is_string() ? seq->as_string().size() : seq->as_array().size();
            if (unit && static_cast<uint64_t>(times) > (seq->is_string() ? kMaxOutputBytes : kMaxSequence) / unit)
                throw RuntimeError("repetition too large");
            if (seq->is_string()) {
                std::string out;
                for (int64_t i = 0; i < times; ++i) out += seq->as_string();
                return Value(std::move(out));
            }
            Array out;
            for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq->as_array().begin(), seq->as_array().end());
            return Value(std::move(out));
        }
    }
    if (!l.is_number() || !r.is_number()) throw bad();
    bool ints = !l.is_float() && !r.is_float();
    if (ints) {
        int64_t a = l.is_bool() ? l.as_bool() : l.as_int();
        int64_t b = r.is_bool() ? r.as_bool() : r.as_int();
        int64_t out = 0;
        if (op == "+" && !__builtin_add_overflow(a, b, &out)) return Value(out);
        if (op == "-" && !__builtin_sub_overflow(a, b, &out)) return Value(out);
        if (op == "*" && !__builtin_mul_overflow(a, b, &out)) return Value(out);
        if (op == "//" || op == "%") {
            if (b == 0) throw RuntimeError("integer division or modulo by zero");
            if (a == std::numeric_limits<int64_t>::min() && b == -1) throw RuntimeError("integer overflow");
            int64_t q = a / b, m = a % b;
            if (m != 0 && ((m < 0) != (b < 0))) {  // Python floors toward negative infinity
                --q;
                m += b;
            }
            return Value(op == "//" ? q : m);
        }
        if (op == "**" && b >= 0) {
            int64_t acc = 1;
            for (int64_t i = 0; i < b; ++i)
                if (__builtin_mul_overflow(acc, a, &acc)) throw RuntimeError("integer overflow in **");
            return Value(acc);
        }
        if (op == "+" || op == "-" || op == "*") throw RuntimeError("integer overflow in " + op);
    }
    double a = l.as_number(), b = r.as_number();
    if (op == "+") return Value(a + b);
    if (op == "-") return Value(a - b);
    if (op == "*") return Value(a * b);
    if (op == "/") {
        if (b == 0) throw RuntimeError("division by zero");
        return Value(a / b);
    }
    if (op == "//") {
        if (b == 0) throw RuntimeError("float floor division by zero");
        return Value(std::floor(a / b));
    }
    if (op == "%") {
        if (b == 0) throw RuntimeError("float modulo by zero");
        double m = std::fmod(a, b);
        if (m != 0 && ((m < 0) != (b < 0))) m += b;
        return Value(m);
    }
    if (op == "**") return Value(std::pow(a, b));
    throw bad();
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
        case Value::Kind::String:
            if (!item.is_string()) throw RuntimeError("'in <string>' requires a string on the left, not " + item.type_name());
            return container.as_string().find(item.as_string()) != std::string::npos;
        case Value::Kind::List:
            for (const auto& v : container.as_array())
                if (values_equal(v, item)) return true;
            return false;
        case Value::Kind::Dict: return item.is_string() && container.as_object().find(item.as_string()) != nullptr;
        case Value::Kind::Undefined: return false;
        default: throw RuntimeError("argument of type '" + container.type_name() + "' is not iterable");
    }
}

// A template can build a cycle (`{% do l.append(l) %}`), which shared_ptr would never free.
// When a render ends, nothing it made is used again, so every reference that closes a cycle
// reachable from its frames is replaced by undefined. Iterative, so a deep value cannot
// overflow the stack; each list and dict is visited once.
void break_cycles(const std::vector<std::shared_ptr<Object>>& roots) noexcept {
    enum class Mark { OnPath, Done };
    std::unordered_map<const void*, Mark> marks;
    struct Visit {
        Value* slot;  // the value whose children are walked
        size_t next;  // the next child to look at
    };
    auto container = [](const Value& v) -> const void* {
        if (v.is_array()) return &v.as_array();
        if (v.is_object()) return &v.as_object();
        return nullptr;
    };
    auto child = [](Value& v, size_t i) -> Value* {
        if (v.is_array()) return i < v.as_array().size() ? &v.as_array()[i] : nullptr;
        return i < v.as_object().entries.size() ? &v.as_object().entries[i].second : nullptr;
    };
    try {
        for (const auto& frame : roots) {
            for (auto& [name, root] : frame->entries) {
                const void* id = container(root);
                if (!id || marks.contains(id)) continue;
                marks[id] = Mark::OnPath;
                std::vector<Visit> stack{{&root, 0}};
                while (!stack.empty()) {
                    Visit& top = stack.back();
                    Value* c = child(*top.slot, top.next++);
                    if (!c) {
                        marks[container(*top.slot)] = Mark::Done;
                        stack.pop_back();
                        continue;
                    }
                    const void* cid = container(*c);
                    if (!cid) continue;
                    auto it = marks.find(cid);
                    if (it == marks.end()) {
                        marks.emplace(cid, Mark::OnPath);
                        stack.push_back({c, 0});
                    } else if (it->second == Mark::OnPath) {
                        *c = Value();  // this reference closes a cycle
                    }
                }
            }
        }
    } catch (...) {  // out of memory while walking: leak rather than fail a finished render
    }
}

class Renderer {
public:
    Renderer(const Program& program, const Object& globals) : program_(program) {
        auto root = std::make_shared<Object>(globals);
        frames_.push_back(std::move(root));
    }
    ~Renderer() { break_cycles(frames_); }
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    std::string run() {
        std::string out;
        out_ = &out;
        exec_body(program_.body);
        return out;
    }

private:
    enum class Flow { Normal, Break, Continue };

    [[noreturn]] void fail_at(size_t offset, const std::string& what) const {
        throw Error("chat template: error at {}: {}", describe_position(program_.source, offset), what);
    }

    void step(size_t offset) {
        if (++steps_ > kMaxSteps) fail_at(offset, "template ran too long (step limit reached)");
    }

    void write(const std::string& s, size_t offset) {
        if (out_->size() + s.size() > kMaxOutputBytes) fail_at(offset, "rendered output too large");
        *out_ += s;
    }

    // --- variables -----------------------------------------------------------------------
    Value lookup(const std::string& name) const {
        for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
            if (const Value* v = (*it)->find(name)) return *v;
        return Value();
    }
    void assign(const std::string& name, Value v) { frames_.back()->set(name, std::move(v)); }

    void assign_targets(const std::vector<std::string>& targets, const Value& v, size_t offset) {
        if (targets.size() == 1) {
            assign(targets[0], v);
            return;
        }
        std::vector<Value> items = iterate(v);
        if (items.size() != targets.size())
            fail_at(offset, "cannot unpack " + std::to_string(items.size()) + " values into " +
                                std::to_string(targets.size()) + " names");
        for (size_t i = 0; i < targets.size(); ++i) assign(targets[i], items[i]);
    }

    // Runs `fn` with `out_` redirected to a fresh string, which it returns.
    template <class Fn> std::string capture(Fn&& fn) {
        std::string buffer;
        std::string* saved = out_;
        out_ = &buffer;
        try {
            fn();
        } catch (...) {
            out_ = saved;
            throw;
        }
        out_ = saved;
        return buffer;
    }

    // --- statements ----------------------------------------------------------------------
    Flow exec_body(const Body& body) {
        for (const auto& s : body) {
            Flow f = Flow::Normal;
            try {
                f = exec(*s);
            } catch (const RuntimeError& err) {  // one not raised inside an expression (e.g. printing)
                fail_at(s->offset, err.what());
            }
            if (f != Flow::Normal) return f;
        }
        return Flow::Normal;
    }

    Flow exec(const Stmt& s) {
        step(s.offset);
        switch (s.kind) {
            case Stmt::Kind::Text: write(s.text, s.offset); return Flow::Normal;
            case Stmt::Kind::Output: write(eval(*s.expr).to_str(), s.offset); return Flow::Normal;
            case Stmt::Kind::If:
                for (const auto& [cond, body] : s.branches)
                    if (eval(*cond).truthy()) return exec_body(body);
                return exec_body(s.else_body);
            case Stmt::Kind::For: return exec_for(s);
            case Stmt::Kind::Set: exec_set(s); return Flow::Normal;
            case Stmt::Kind::Macro: assign(s.text, make_macro(s, s.text)); return Flow::Normal;
            case Stmt::Kind::CallBlock: write(exec_call_block(s).to_str(), s.offset); return Flow::Normal;
            case Stmt::Kind::FilterBlock: {
                Value body(capture([&] { exec_body(s.body); }));
                std::swap(filter_input_, body);
                Value result = eval(*s.expr);
                filter_input_ = std::move(body);
                write(result.to_str(), s.offset);
                return Flow::Normal;
            }
            case Stmt::Kind::Break: return Flow::Break;
            case Stmt::Kind::Continue: return Flow::Continue;
            case Stmt::Kind::Do: eval(*s.expr); return Flow::Normal;
            case Stmt::Kind::Block: return exec_body(s.body);
        }
        return Flow::Normal;
    }

    Flow exec_for(const Stmt& s) {
        Value iterable = eval(*s.expr);
        if (!iterable.is_undefined() && !iterable.is_array() && !iterable.is_object() && !iterable.is_string())
            fail_at(s.expr->offset, "'" + iterable.type_name() + "' object is not iterable");
        std::vector<Value> items = iterate(iterable);

        frames_.push_back(std::make_shared<Object>());
        struct Pop {
            Frames& f;
            ~Pop() { f.pop_back(); }
        } pop{frames_};

        if (s.cond) {  // `for x in xs if cond`: filtered before loop.index counts
            std::vector<Value> kept;
            for (const auto& item : items) {
                step(s.offset);
                assign_targets(s.targets, item, s.offset);
                if (eval(*s.cond).truthy()) kept.push_back(item);
            }
            items = std::move(kept);
        }
        if (items.empty()) return exec_body(s.else_body);

        // One `loop` object per loop, updated in place: building a fresh dict per iteration
        // costs more than the rest of a typical iteration.
        const auto n = static_cast<int64_t>(items.size());
        auto position = std::make_shared<int64_t>(0);
        Value loop = make_object({
            {"index", Value()}, {"index0", Value()}, {"revindex", Value()}, {"revindex0", Value()},
            {"first", Value()}, {"last", Value()}, {"previtem", Value()}, {"nextitem", Value()},
            {"length", Value(n)}, {"depth", Value(1)}, {"depth0", Value(0)},
        });
        loop.as_object().set("cycle", make_callable("cycle", [position](const CallArgs& args) {
            if (args.positional.empty()) throw RuntimeError("loop.cycle needs at least one argument");
            return args.positional[static_cast<size_t>(*position) % args.positional.size()];
        }));
        auto& slots = loop.as_object().entries;
        for (int64_t i = 0; i < n; ++i) {
            step(s.offset);
            auto idx = static_cast<size_t>(i);
            *position = i;
            slots[0].second = Value(i + 1);
            slots[1].second = Value(i);
            slots[2].second = Value(n - i);
            slots[3].second = Value(n - i - 1);
            slots[4].second = Value(i == 0);
            slots[5].second = Value(i == n - 1);
            slots[6].second = i > 0 ? items[idx - 1] : Value();
            slots[7].second = i + 1 < n ? items[idx + 1] : Value();
            assign("loop", loop);
            assign_targets(s.targets, items[idx], s.offset);
            if (exec_body(s.body) == Flow::Break) break;
        }
        return Flow::Normal;
    }

    void exec_set(const Stmt& s) {
        Value v = s.expr ? eval(*s.expr) : Value(capture([&] { exec_body(s.body); }));
        if (s.attr_target) {
            Value obj = eval(*s.attr_target);
            if (!obj.is_object()) fail_at(s.offset, "cannot set attribute '" + s.text + "' on " + obj.type_name());
            obj.as_object().set(s.text, std::move(v));
            return;
        }
        assign_targets(s.targets, v, s.offset);
    }

    // A macro (or the body of a call block, as `caller`) becomes a callable that renders its
    // body in a new frame above the frames visible where it was defined.
    // The macro holds its defining frames weakly: a frame usually holds the macro, and a
    // strong reference back would be a cycle that shared_ptr never frees.
    Value make_macro(const Stmt& s, const std::string& name) {
        std::vector<std::weak_ptr<Object>> defined_in(frames_.begin(), frames_.end());
        return make_callable(name, [this, &s, defined_in, name](const CallArgs& args) -> Value {
            if (call_depth_ >= kMaxCallDepth) throw RuntimeError("macros nested too deeply (recursion limit)");
            Frames scope;
            for (const auto& weak : defined_in) {
                scope.push_back(weak.lock());
                if (!scope.back()) throw RuntimeError("macro '" + name + "' called after the block that defined it ended");
            }
            auto frame = std::make_shared<Object>();
            for (size_t i = 0; i < s.params.size(); ++i) {
                const MacroParam& p = s.params[i];
                if (i < args.positional.size()) frame->set(p.name, args.positional[i]);
                else if (const Value* kw = args.find_keyword(p.name)) frame->set(p.name, *kw);
                else frame->set(p.name, p.default_value ? eval(*p.default_value) : Value());
            }
            Array varargs;
            for (size_t i = s.params.size(); i < args.positional.size(); ++i) varargs.push_back(args.positional[i]);
            frame->set("varargs", Value(std::move(varargs)));
            auto kwargs = std::make_shared<Object>();
            for (const auto& [k, v] : args.keyword) {
                bool is_param = false;
                for (const auto& p : s.params) is_param |= p.name == k;
                if (k == "caller") frame->set("caller", v);
                else if (!is_param) kwargs->set(k, v);
            }
            frame->set("kwargs", Value(std::move(kwargs)));

            Frames saved = std::move(frames_);
            frames_ = std::move(scope);
            frames_.push_back(frame);
            ++call_depth_;
            struct Restore {
                Renderer& r;
                Frames& saved;
                ~Restore() {
                    r.frames_ = std::move(saved);
                    --r.call_depth_;
                }
            } restore{*this, saved};
            return Value(capture([&] { exec_body(s.body); }));
        });
    }

    Value exec_call_block(const Stmt& s) {
        Value caller = make_macro(s, "caller");
        const Expr& call = *s.expr;
        CallArgs args = eval_args(call);
        args.keyword.emplace_back("caller", caller);
        return call_value(call, args);
    }

    // --- expressions ---------------------------------------------------------------------
    CallArgs eval_args(const Expr& e) {
        CallArgs args;
        for (const auto& a : e.items) args.positional.push_back(eval(*a));
        for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, eval(*v));
        return args;
    }

    // Calls what a Call node names: a built-in method when the callee is `obj.method`, else
    // a callable value (macro, global, bound method).
    Value call_value(const Expr& call, const CallArgs& args) {
        const Expr& callee = *call.a;
        if (callee.kind == Expr::Kind::Attr) {
            Value obj = eval(*callee.a);
            const Value* own = obj.is_object() ? obj.as_object().find(callee.name) : nullptr;
            if (!(own && own->is_callable()))
                if (auto r = call_method(obj, callee.name, args)) return *r;
            Value fn = own ? *own : Value();
            if (!fn.is_callable())
                throw RuntimeError("'" + obj.type_name() + "' object has no method '" + callee.name + "'");
            return fn.as_callable().fn(args);
        }
        Value fn = eval(callee);
        if (!fn.is_callable()) {
            if (callee.kind == Expr::Kind::Name && fn.is_undefined())
                throw RuntimeError("'" + callee.name + "' is undefined");
            throw RuntimeError("'" + fn.type_name() + "' object is not callable");
        }
        return fn.as_callable().fn(args);
    }

    Value eval(const Expr& e) {
        try {
            return eval_inner(e);
        } catch (const RuntimeError& err) {
            fail_at(e.offset, err.what());
        }
    }

    Value eval_inner(const Expr& e) {
        switch (e.kind) {
            case Expr::Kind::Literal: return e.value;
            case Expr::Kind::Name: return lookup(e.name);
            case Expr::Kind::List:
            case Expr::Kind::Tuple: {
                Array out;
                for (const auto& item : e.items) out.push_back(eval(*item));
                return Value(std::move(out));
            }
            case Expr::Kind::Dict: {
                auto obj = std::make_shared<Object>();
                for (const auto& [k, v] : e.pairs) {
                    Value key = eval(*k);
                    obj->set(key.is_string() ? key.as_string() : key.to_str(), eval(*v));
                }
                return Value(std::move(obj));
            }
            case Expr::Kind::Attr: return get_attr(eval(*e.a), e.name);
            case Expr::Kind::Index: return get_item(eval(*e.a), eval(*e.b));
            case Expr::Kind::Slice:
                return get_slice(eval(*e.a), e.b ? eval(*e.b) : Value(), e.c ? eval(*e.c) : Value(),
                                 e.d ? eval(*e.d) : Value());
            case Expr::Kind::Call: return call_value(e, eval_args(e));
            case Expr::Kind::Filter: {
                Value input = e.a ? eval(*e.a) : filter_input_;
                return apply_filter(e.name, input, eval_args(e));
            }
            case Expr::Kind::Test: {
                Value v = eval(*e.a);
                return Value(apply_test(e.name, v, eval_args(e)) != e.negated);
            }
            case Expr::Kind::Unary: {
                Value v = eval(*e.a);
                if (e.name == "not") return Value(!v.truthy());
                if (!v.is_number()) throw RuntimeError("bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
                if (e.name == "+") return v.is_bool() ? Value(int64_t{v.as_bool()}) : v;
                if (v.is_float()) return Value(-v.as_float());
                int64_t i = v.is_bool() ? v.as_bool() : v.as_int();
                if (i == std::numeric_limits<int64_t>::min()) throw RuntimeError("integer overflow");
                return Value(-i);
            }
            case Expr::Kind::Binary: return eval_binary(e);
            case Expr::Kind::Cond:
                if (eval(*e.a).truthy()) return eval(*e.b);
                return e.c ? eval(*e.c) : Value();
        }
        return Value();
    }

    Value eval_binary(const Expr& e) {
        const std::string& op = e.name;
        Value l = eval(*e.a);
        // and/or short-circuit and yield an operand, as in Python.
        if (op == "and") return l.truthy() ? eval(*e.b) : l;
        if (op == "or") return l.truthy() ? l : eval(*e.b);
        Value r = eval(*e.b);
        if (op == "==") return Value(values_equal(l, r));
        if (op == "!=") return Value(!values_equal(l, r));
        if (op == "<") return Value(compare_values(l, r) < 0);
        if (op == ">") return Value(compare_values(l, r) > 0);
        if (op == "<=") return Value(compare_values(l, r) <= 0);
        if (op == ">=") return Value(compare_values(l, r) >= 0);
        if (op == "in") return Value(contains(r, l));
        if (op == "not in") return Value(!contains(r, l));
        if (op == "~") {
            std::string s = l.to_str();
            std::string t = r.to_str();
            if (s.size() + t.size() > kMaxOutputBytes) throw RuntimeError("string too long");
            return Value(s + t);
        }
        return arith(op, l, r);
    }

    const Program& program_;
    Frames frames_;
    std::string* out_ = nullptr;
    Value filter_input_;
    uint64_t steps_ = 0;
    int call_depth_ = 0;
};

}  // namespace

std::string render_program(const Program& program, const Object& globals) {
    return Renderer(program, globals).run();
}

}  // namespace pocket::jinja
