#pragma once
// Chat templates: renders a conversation into the prompt text a model was trained on. The
// template is the Jinja source a GGUF carries in `tokenizer.chat_template` (as HF transformers
// renders it: trim_blocks, lstrip_blocks, loop controls, raise_exception, strftime_now and a
// non-ASCII-keeping tojson), or one of pocket's built-in templates.
//
// Errors (syntax errors, with line and column; raise_exception, with the template's own
// message; runtime errors) are thrown as pocket::Error.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

class GgufFile;
class Vocab;

namespace jinja {
struct Program;
}

struct ChatMessage {
    std::string role;
    std::string content;
};

class ChatTemplate {
public:
    // Parses Jinja source; throws pocket::Error naming line and column on a syntax error.
    static ChatTemplate parse(std::string_view source);

    // The template's variables are `messages` (a list of {role, content} dicts) and
    // `add_generation_prompt`; `bos_token` / `eos_token` are defined only when given.
    std::string render(std::span<const ChatMessage> messages, bool add_generation_prompt,
                       std::optional<std::string> bos_token = std::nullopt,
                       std::optional<std::string> eos_token = std::nullopt) const;

    // Renders with variables given as a JSON object: every key becomes a template variable,
    // so messages may carry tool_calls and the like, and `tools` / `enable_thinking` pass
    // through. Throws pocket::Error on malformed JSON.
    std::string render_json_variables(std::string_view json_object) const;

    const std::string& source() const;  // as parsed (newlines normalized)

private:
    explicit ChatTemplate(std::shared_ptr<const jinja::Program> program) : program_(std::move(program)) {}
    std::shared_ptr<const jinja::Program> program_;
};

// Jinja source of a built-in template: chatml, llama2, llama3, mistral, gemma, phi3, zephyr,
// vicuna. nullopt for any other name.
std::optional<std::string> builtin_chat_template(std::string_view name);
std::vector<std::string> builtin_chat_template_names();

// The built-in whose markers the vocabulary has: <|im_start|> → chatml, <|start_header_id|> →
// llama3, <start_of_turn> → gemma, <|user|> with <|end|> → phi3, [INST] → mistral (llama2
// when general.name says Llama 2), otherwise chatml.
std::string guess_builtin_template(const Vocab& vocab);

// The template `run --chat-template NAME|FILE` asks for: a built-in name, or else a file of
// Jinja source. With no override: the file's tokenizer.chat_template, else the built-in guessed
// from the vocabulary.
ChatTemplate chat_template_for(const GgufFile& file, const Vocab& vocab, std::string_view override_name_or_file = {});

// `run --render-chat MESSAGES.json`: the JSON is {"messages": [...], "add_generation_prompt":
// bool, "bos_token": str, "eos_token": str}; add_generation_prompt defaults to true, an absent
// (or null) bos/eos token is not passed. Other keys (tools, enable_thinking, ...) are passed as
// variables too.
std::string render_chat_json(std::string_view json, const ChatTemplate& chat_template);

}  // namespace pocket
