#include "request_parsing.hpp"

#include "api_error.hpp"

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace pocket::serve {
namespace {

using nlohmann::json;

const json* field(const json& body, const std::string& name) {
    const auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void invalid(const std::string& name, const std::string& what) {
    throw ApiError(400, "'" + name + "' " + what, name);
}

double number(const json& body, const std::string& name, double fallback, double lo, double hi) {
    const json* v = field(body, name);
    if (!v) return fallback;
    if (!v->is_number()) invalid(name, "must be a number");
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) invalid(name, fmt::format("must be between {} and {}", lo, hi));
    return x;
}

// An integer field within [lo, hi]; a JSON integer too big for int64 counts as above hi.
int64_t integer(const json& body, const std::string& name, int64_t fallback, int64_t lo, int64_t hi) {
    const json* v = field(body, name);
    if (!v) return fallback;
    if (!v->is_number_integer()) invalid(name, "must be an integer");
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
        invalid(name, fmt::format("must be between {} and {}", lo, hi));
    const int64_t x = v->get<int64_t>();
    if (x < lo || x > hi) invalid(name, fmt::format("must be between {} and {}", lo, hi));
    return x;
}

}  // namespace

json parse_body(const std::string& body) {
    json j;
    try {
        j = json::parse(body);
    } catch (const json::parse_error& e) {
        throw ApiError(400, std::string("the body is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw ApiError(400, "the body must be a JSON object");
    return j;
}

bool optional_bool(const json& body, const std::string& name, bool fallback) {
    const json* v = field(body, name);
    if (!v) return fallback;
    if (!v->is_boolean()) invalid(name, "must be true or false");
    return v->get<bool>();
}

CompletionRequest parse_completion_fields(const json& body) {
    CompletionRequest r;
    GenerationRequest& g = r.generation;
    // Tokens to generate: OpenAI's newer name wins over the older one, then llama-server's.
    // A huge value is allowed: the slot's context ends generation first ("length").
    g.max_tokens = integer(body, "n_predict", -1, -1, INT64_MAX);
    g.max_tokens = integer(body, "max_tokens", g.max_tokens, -1, INT64_MAX);
    g.max_tokens = integer(body, "max_completion_tokens", g.max_tokens, -1, INT64_MAX);

    SamplerOptions& s = g.sampling;  // llama-server's defaults
    s.temperature = static_cast<float>(number(body, "temperature", s.temperature, 0.0, 100.0));
    s.top_p = static_cast<float>(number(body, "top_p", s.top_p, 0.0, 1.0));
    s.min_p = static_cast<float>(number(body, "min_p", s.min_p, 0.0, 1.0));
    s.typical_p = static_cast<float>(number(body, "typical_p", s.typical_p, 0.0, 1.0));
    s.top_k = static_cast<int32_t>(integer(body, "top_k", s.top_k, -1, INT32_MAX));
    s.presence_penalty = static_cast<float>(number(body, "presence_penalty", 0.0, -2.0, 2.0));
    s.frequency_penalty = static_cast<float>(number(body, "frequency_penalty", 0.0, -2.0, 2.0));
    s.repeat_penalty = static_cast<float>(number(body, "repeat_penalty", 1.0, 0.0, 100.0));
    s.repeat_last_n = static_cast<int32_t>(integer(body, "repeat_last_n", s.repeat_last_n, -1, INT32_MAX));
    // No seed (or a negative one): a random seed, as llama-server's -1.
    const json* seed = field(body, "seed");
    if (seed && !seed->is_number_integer()) invalid("seed", "must be an integer");
    if (seed && (seed->is_number_unsigned() || seed->get<int64_t>() >= 0)) s.seed = seed->get<uint64_t>();
    else s.seed = std::random_device{}();

    if (const json* stop = field(body, "stop")) {
        if (stop->is_string()) g.stop.push_back(stop->get<std::string>());
        else if (stop->is_array()) {
            if (stop->size() > 16) invalid("stop", "may hold at most 16 strings");
            for (const json& x : *stop) {
                if (!x.is_string()) invalid("stop", "must be a string or an array of strings");
                g.stop.push_back(x.get<std::string>());
            }
        } else {
            invalid("stop", "must be a string or an array of strings");
        }
        std::erase(g.stop, std::string());
    }
    if (integer(body, "n", 1, 1, 1) != 1) invalid("n", "must be 1");
    r.stream = optional_bool(body, "stream", false);
    r.ignore_eos = optional_bool(body, "ignore_eos", false);
    if (const json* so = field(body, "stream_options")) {
        if (!so->is_object()) invalid("stream_options", "must be an object");
        r.include_usage = optional_bool(*so, "include_usage", false);
    }
    return r;
}

std::vector<ChatMessage> parse_messages(const json& body) {
    const json* m = field(body, "messages");
    if (!m) invalid("messages", "is required");
    if (!m->is_array() || m->empty()) invalid("messages", "must be a non-empty array");
    std::vector<ChatMessage> out;
    for (size_t i = 0; i < m->size(); ++i) {
        const json& msg = (*m)[i];
        const std::string name = fmt::format("messages[{}]", i);
        if (!msg.is_object()) invalid(name, "must be an object");
        const json* role = field(msg, "role");
        if (!role || !role->is_string()) invalid(name + ".role", "must be a string");
        ChatMessage cm{role->get<std::string>(), {}};
        if (const json* content = field(msg, "content")) {
            if (content->is_string()) cm.content = content->get<std::string>();
            else if (content->is_array()) {
                for (const json& part : *content) {
                    if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") || !part["text"].is_string())
                        invalid(name + ".content", "parts must be {\"type\": \"text\", \"text\": ...} (pocket reads text only)");
                    cm.content += part["text"].get<std::string>();
                }
            } else {
                invalid(name + ".content", "must be a string, an array of text parts or null");
            }
        }
        out.push_back(std::move(cm));
    }
    return out;
}

std::vector<TokenId> parse_token_ids(const json& value, const std::string& name, const Vocab& vocab) {
    if (!value.is_array()) invalid(name, "must be an array of token ids");
    std::vector<TokenId> ids;
    ids.reserve(value.size());
    for (const json& x : value) {
        if (!x.is_number_integer() || x.get<int64_t>() < 0 || x.get<int64_t>() >= static_cast<int64_t>(vocab.size()))
            invalid(name, fmt::format("must hold token ids between 0 and {}", vocab.size() - 1));
        ids.push_back(static_cast<TokenId>(x.get<int64_t>()));
    }
    return ids;
}

std::vector<TokenId> parse_prompt(const json& body, const Tokenizer& tokenizer) {
    const json* p = field(body, "prompt");
    if (!p) invalid("prompt", "is required");
    const json* one = p;
    if (p->is_array() && !p->empty() && (p->front().is_string() || p->front().is_array())) {
        if (p->size() != 1) invalid("prompt", "may hold one prompt only (pocket answers one choice per request)");
        one = &p->front();
    }
    if (one->is_string()) return tokenizer.tokenize(one->get<std::string>(), /*add_special=*/true, /*parse_special=*/true);
    if (one->is_array()) return parse_token_ids(*one, "prompt", tokenizer.vocab());
    invalid("prompt", "must be a string or an array of token ids");
}

}  // namespace pocket::serve
