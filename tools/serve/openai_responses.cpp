#include "openai_responses.hpp"

#include <fmt/format.h>

#include <chrono>
#include <random>

namespace pocket::serve {
namespace {

using nlohmann::json;

json envelope(const ResponseIdentity& id, bool chunk) {
    const char* object = id.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return {{"id", id.id}, {"object", object}, {"created", id.created}, {"model", id.model}, {"system_fingerprint", "pocket"}};
}

// Stop, length; a cancelled request that still answers (it cannot: the client left) says stop.
const char* reason_name(FinishReason r) { return r == FinishReason::length ? "length" : "stop"; }

json choice(const ResponseIdentity& id, const json& content, const json& finish_reason) {
    json c = {{"index", 0}, {"finish_reason", finish_reason}};
    if (id.chat) c["delta"] = content;
    else c["text"] = content, c["logprobs"] = nullptr;
    return c;
}

}  // namespace

ResponseIdentity new_identity(bool chat, const std::string& model) {
    thread_local std::mt19937_64 rng{std::random_device{}()};
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    return {chat, fmt::format("{}-{:016x}", chat ? "chatcmpl" : "cmpl", rng()), std::chrono::duration_cast<std::chrono::seconds>(now).count(), model};
}

json usage_json(const Outcome& o) {
    return {{"prompt_tokens", o.prompt_tokens},
            {"completion_tokens", o.completion_tokens},
            {"total_tokens", o.prompt_tokens + o.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", o.cached_tokens}}}};
}

json completion_body(const ResponseIdentity& id, const std::string& text, const Outcome& o) {
    json body = envelope(id, false);
    json c = {{"index", 0}, {"finish_reason", reason_name(o.reason)}};
    if (id.chat) c["message"] = {{"role", "assistant"}, {"content", text}};
    else c["text"] = text, c["logprobs"] = nullptr;
    body["choices"] = json::array({c});
    body["usage"] = usage_json(o);
    return body;
}

json role_chunk(const ResponseIdentity& id) {
    json j = envelope(id, true);
    j["choices"] = json::array({choice(id, {{"role", "assistant"}, {"content", ""}}, nullptr)});
    return j;
}

json text_chunk(const ResponseIdentity& id, const std::string& piece) {
    json j = envelope(id, true);
    j["choices"] = json::array({choice(id, id.chat ? json{{"content", piece}} : json(piece), nullptr)});
    return j;
}

json finish_chunk(const ResponseIdentity& id, FinishReason reason) {
    json j = envelope(id, true);
    j["choices"] = json::array({choice(id, id.chat ? json::object() : json(""), reason_name(reason))});
    return j;
}

json usage_chunk(const ResponseIdentity& id, const Outcome& o) {
    json j = envelope(id, true);
    j["choices"] = json::array();
    j["usage"] = usage_json(o);
    return j;
}

}  // namespace pocket::serve
