#pragma once
// The JSON OpenAI's clients expect back: chat.completion / text_completion bodies, their
// streamed chunks (chat.completion.chunk with a `delta`, text_completion with `text`), usage.
#include "task.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace pocket::serve {

struct ResponseIdentity {
    bool chat = true;          // /v1/chat/completions, else /v1/completions
    std::string id;            // "chatcmpl-…" / "cmpl-…", the same in every chunk
    int64_t created = 0;       // Unix seconds
    std::string model;
};

ResponseIdentity new_identity(bool chat, const std::string& model);

nlohmann::json usage_json(const Outcome& o);
nlohmann::json completion_body(const ResponseIdentity& id, const std::string& text, const Outcome& o);

// One streamed chunk: the assistant's role (chat's first chunk), a text piece, or the end
// with its finish_reason. With usage: OpenAI's extra last chunk (empty choices).
nlohmann::json role_chunk(const ResponseIdentity& id);
nlohmann::json text_chunk(const ResponseIdentity& id, const std::string& piece);
nlohmann::json finish_chunk(const ResponseIdentity& id, FinishReason reason);
nlohmann::json usage_chunk(const ResponseIdentity& id, const Outcome& o);

}  // namespace pocket::serve
