// The global functions HF transformers gives chat templates (raise_exception, strftime_now)
// and Jinja's own (range, namespace, dict).
#include "chat/builtins.hpp"
#include "pocket/error.hpp"

#include <ctime>

namespace pocket::jinja {

static int64_t int_param(const Value& v, const char* fn) {
    if (v.is_int()) return v.as_int();
    if (v.is_bool()) return v.as_bool();
    throw RuntimeError(std::string(fn) + " needs integer arguments, got " + v.type_name());
}

void add_globals(Object& frame) {
    frame.set("raise_exception", make_callable("raise_exception", [](const CallArgs& args) -> Value {
        // The template's own message, verbatim: it is what the user needs to read.
        throw Error("chat template: {}", args.get(0, "message").to_str());
    }));
    frame.set("range", make_callable("range", [](const CallArgs& args) {
        int64_t start = 0, stop = 0, step = 1;
        if (args.positional.size() == 1) {
            stop = int_param(args.positional[0], "range");
        } else if (args.positional.size() >= 2) {
            start = int_param(args.positional[0], "range");
            stop = int_param(args.positional[1], "range");
            if (args.positional.size() >= 3) step = int_param(args.positional[2], "range");
        } else {
            throw RuntimeError("range expected at least 1 argument");
        }
        if (step == 0) throw RuntimeError("range() arg 3 must not be zero");
        Array out;
        for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
            if (out.size() >= kMaxSequence) throw RuntimeError("range too large");
            out.emplace_back(i);
        }
        return Value(std::move(out));
    }));
    frame.set("namespace", make_callable("namespace", [](const CallArgs& args) {
        auto ns = std::make_shared<Object>();
        ns->is_namespace = true;
        for (const auto& p : args.positional)
            if (p.is_object())
                for (const auto& [k, v] : p.as_object().entries) ns->set(k, v);
        for (const auto& [k, v] : args.keyword) ns->set(k, v);
        return Value(std::move(ns));
    }));
    frame.set("dict", make_callable("dict", [](const CallArgs& args) {
        auto d = std::make_shared<Object>();
        for (const auto& p : args.positional)
            if (p.is_object())
                for (const auto& [k, v] : p.as_object().entries) d->set(k, v);
        for (const auto& [k, v] : args.keyword) d->set(k, v);
        return Value(std::move(d));
    }));
    frame.set("strftime_now", make_callable("strftime_now", [](const CallArgs& args) {
        std::string fmt = args.get(0, "format").to_str();
        std::time_t now = std::time(nullptr);
        std::tm tm{};
        localtime_r(&now, &tm);
        char buf[256];
        size_t n = fmt.empty() ? 0 : std::strftime(buf, sizeof buf, fmt.c_str(), &tm);
        return Value(std::string(buf, n));
    }));
}

}  // namespace pocket::jinja
