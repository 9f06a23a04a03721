#pragma once
// Request bodies to what the scheduler runs. Every field is type- and range-checked; a bad one
// is a 400 naming it (OpenAI's `param`), never an exception that escapes as a crash.
#include "task.hpp"

#include "pocket/chat_template.hpp"
#include "pocket/tokenizer.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace pocket::serve {

// The fields /v1/chat/completions and /v1/completions share.
struct CompletionRequest {
    GenerationRequest generation;  // prompt left empty: the endpoint fills it
    bool stream = false;
    bool include_usage = false;    // stream_options.include_usage
    bool ignore_eos = false;       // llama-server's: never end at an end-of-generation token
};

// The body as a JSON object; 400 when it is not JSON (truncated, not UTF-8) or not an object.
nlohmann::json parse_body(const std::string& body);

// max_tokens / max_completion_tokens / n_predict, temperature, top_p, top_k, min_p, seed,
// stop, presence_penalty, frequency_penalty, repeat_penalty, stream, stream_options, n,
// ignore_eos.
CompletionRequest parse_completion_fields(const nlohmann::json& body);

// /v1/chat/completions' `messages`: a non-empty array of {role, content}, content a string,
// null, or an array of {"type": "text", "text": ...} parts.
std::vector<ChatMessage> parse_messages(const nlohmann::json& body);

// /v1/completions' `prompt`: a string, an array of token ids, or an array holding one of those.
std::vector<TokenId> parse_prompt(const nlohmann::json& body, const Tokenizer& tokenizer);

// /detokenize's `tokens` and the like: an array of ids the vocabulary has.
std::vector<TokenId> parse_token_ids(const nlohmann::json& value, const std::string& field, const Vocab& vocab);

// A boolean field, `fallback` when absent or null.
bool optional_bool(const nlohmann::json& body, const std::string& field, bool fallback);

}  // namespace pocket::serve
