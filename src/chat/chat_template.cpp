// The public ChatTemplate: parse, render with the variables HF transformers passes, and
// render from a JSON description of the conversation.
#include "pocket/chat_template.hpp"

#include "chat/builtins.hpp"
#include "chat/evaluator.hpp"
#include "chat/parser.hpp"
#include "pocket/error.hpp"

#include <nlohmann/json.hpp>

namespace pocket {

using jinja::Object;
using jinja::Value;

ChatTemplate ChatTemplate::parse(std::string_view source) { return ChatTemplate(jinja::parse_template(source)); }

const std::string& ChatTemplate::source() const { return program_->source; }

static std::string render_with(const jinja::Program& program, Object vars) {
    jinja::add_globals(vars);
    return jinja::render_program(program, vars);
}

std::string ChatTemplate::render(std::span<const ChatMessage> messages, bool add_generation_prompt,
                                 std::optional<std::string> bos_token, std::optional<std::string> eos_token) const {
    jinja::Array list;
    for (const auto& m : messages) list.push_back(jinja::make_object({{"role", Value(m.role)}, {"content", Value(m.content)}}));
    Object vars;
    vars.set("messages", Value(std::move(list)));
    vars.set("add_generation_prompt", Value(add_generation_prompt));
    if (bos_token) vars.set("bos_token", Value(*bos_token));
    if (eos_token) vars.set("eos_token", Value(*eos_token));
    return render_with(*program_, std::move(vars));
}

namespace {

Value from_json(const nlohmann::ordered_json& j, int depth = 0) {
    if (depth > 128) throw Error("chat messages JSON: nested too deeply");
    switch (j.type()) {
        case nlohmann::ordered_json::value_t::null: return Value(nullptr);
        case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
        case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
        case nlohmann::ordered_json::value_t::number_unsigned: {
            auto u = j.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
            return Value(static_cast<int64_t>(u));
        }
        case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
        case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
        case nlohmann::ordered_json::value_t::array: {
            jinja::Array a;
            for (const auto& item : j) a.push_back(from_json(item, depth + 1));
            return Value(std::move(a));
        }
        case nlohmann::ordered_json::value_t::object: {
            auto o = std::make_shared<Object>();
            for (const auto& [k, v] : j.items()) o->set(k, from_json(v, depth + 1));
            return Value(std::move(o));
        }
        default: throw Error("chat messages JSON: unsupported value");
    }
}

nlohmann::ordered_json parse_json_object(std::string_view json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(json.begin(), json.end(), nullptr, false);
    if (j.is_discarded()) throw Error("chat messages JSON: not valid JSON");
    if (!j.is_object()) throw Error("chat messages JSON: expected an object at the top level");
    return j;
}

}  // namespace

std::string ChatTemplate::render_json_variables(std::string_view json_object) const {
    nlohmann::ordered_json j = parse_json_object(json_object);
    Object vars;
    for (const auto& [k, v] : j.items()) vars.set(k, from_json(v));
    return render_with(*program_, std::move(vars));
}

std::string render_chat_json(std::string_view json, const ChatTemplate& chat_template) {
    nlohmann::ordered_json j = parse_json_object(json);
    auto messages = j.find("messages");
    if (messages == j.end() || !messages->is_array()) throw Error("chat messages JSON: \"messages\" must be a list");
    for (const auto& m : *messages)
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string())
            throw Error("chat messages JSON: every message needs a string \"role\"");
    if (!j.contains("add_generation_prompt")) j["add_generation_prompt"] = true;
    else if (!j["add_generation_prompt"].is_boolean())
        throw Error("chat messages JSON: \"add_generation_prompt\" must be true or false");
    // An absent or null token is not passed at all, so `bos_token is defined` is false.
    for (const char* key : {"bos_token", "eos_token"}) {
        auto it = j.find(key);
        if (it == j.end()) continue;
        if (it->is_null()) j.erase(it);
        else if (!it->is_string()) throw Error("chat messages JSON: \"{}\" must be a string or null", key);
    }
    return chat_template.render_json_variables(j.dump());
}

}  // namespace pocket
