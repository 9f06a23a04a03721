// pocket's own templates for models whose GGUF carries none. Each is plain Jinja, rendered by
// the same interpreter, written to produce the format its model family was trained on.
// `bos_token` / `eos_token` are joined with `~` so that a token not passed renders as nothing.
#include "pocket/chat_template.hpp"

#include <array>
#include <utility>

namespace pocket {
namespace {

// <|im_start|>role\ncontent<|im_end|>\n ... <|im_start|>assistant\n
constexpr const char* kChatml = R"({%- for message in messages -%}
{{- '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- endif -%})";

// Llama 2 chat: <s>[INST] <<SYS>>\nsys\n<</SYS>>\n\nuser [/INST] answer </s><s>[INST] user [/INST]
constexpr const char* kLlama2 = R"({%- if messages and messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] | trim -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set system = '' -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{%- set content = message['content'] | trim -%}
{%- if loop.first and system -%}
{%- set content = '<<SYS>>\n' + system + '\n<</SYS>>\n\n' + content -%}
{%- endif -%}
{{- '' ~ bos_token ~ '[INST] ' + content + ' [/INST]' -}}
{%- elif message['role'] == 'assistant' -%}
{{- ' ' + message['content'] | trim + ' ' ~ eos_token -}}
{%- endif -%}
{%- endfor -%})";

// Llama 3 instruct: <|begin_of_text|><|start_header_id|>role<|end_header_id|>\n\ncontent<|eot_id|>
constexpr const char* kLlama3 = R"({{- '' ~ bos_token -}}
{%- for message in messages -%}
{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
{%- endif -%})";

// Mistral instruct (v0.1/v0.2): <s>[INST] user [/INST]answer</s>[INST] user [/INST]; a system
// message has no marker of its own and goes before the first user message.
constexpr const char* kMistral = R"({%- if messages and messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set system = '' -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{{- '' ~ bos_token -}}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{%- if loop.first and system -%}
{{- '[INST] ' + system + '\n\n' + message['content'] + ' [/INST]' -}}
{%- else -%}
{{- '[INST] ' + message['content'] + ' [/INST]' -}}
{%- endif -%}
{%- elif message['role'] == 'assistant' -%}
{{- message['content'] ~ eos_token -}}
{%- endif -%}
{%- endfor -%})";

// Gemma: <start_of_turn>user\n...<end_of_turn>\n<start_of_turn>model\n; no system role, so a
// system message is put before the first user message.
constexpr const char* kGemma = R"({{- '' ~ bos_token -}}
{%- if messages and messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] | trim + '\n\n' -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set system = '' -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
{%- set content = message['content'] | trim -%}
{%- if loop.first and role == 'user' -%}
{%- set content = system + content -%}
{%- endif -%}
{{- '<start_of_turn>' + role + '\n' + content + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<start_of_turn>model\n' -}}
{%- endif -%})";

// Phi-3: <|role|>\ncontent<|end|>\n ... <|assistant|>\n
constexpr const char* kPhi3 = R"({%- for message in messages -%}
{{- '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|assistant|>\n' -}}
{%- endif -%})";

// Zephyr: <|role|>\ncontent</s>\n ... <|assistant|>\n
constexpr const char* kZephyr = R"({%- for message in messages -%}
{{- '<|' + message['role'] + '|>\n' + message['content'] ~ eos_token ~ '\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|assistant|>\n' -}}
{%- endif -%})";

// Vicuna v1.1: "SYSTEM USER: question ASSISTANT: answer</s>USER: ... ASSISTANT:"
constexpr const char* kVicuna = R"({%- if messages and messages[0]['role'] == 'system' -%}
{%- set system = messages[0]['content'] -%}
{%- set loop_messages = messages[1:] -%}
{%- else -%}
{%- set system = "A chat between a curious user and an artificial intelligence assistant. The assistant gives helpful, detailed, and polite answers to the user's questions." -%}
{%- set loop_messages = messages -%}
{%- endif -%}
{{- system + ' ' -}}
{%- for message in loop_messages -%}
{%- if message['role'] == 'user' -%}
{{- 'USER: ' + message['content'] + ' ' -}}
{%- elif message['role'] == 'assistant' -%}
{{- 'ASSISTANT: ' + message['content'] ~ eos_token -}}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- 'ASSISTANT:' -}}
{%- endif -%})";

constexpr std::array<std::pair<const char*, const char*>, 8> kBuiltins{{
    {"chatml", kChatml},
    {"llama2", kLlama2},
    {"llama3", kLlama3},
    {"mistral", kMistral},
    {"gemma", kGemma},
    {"phi3", kPhi3},
    {"zephyr", kZephyr},
    {"vicuna", kVicuna},
}};

}  // namespace

std::optional<std::string> builtin_chat_template(std::string_view name) {
    for (const auto& [n, src] : kBuiltins)
        if (name == n) return std::string(src);
    return std::nullopt;
}

std::vector<std::string> builtin_chat_template_names() {
    std::vector<std::string> names;
    for (const auto& [n, _] : kBuiltins) names.emplace_back(n);
    return names;
}

}  // namespace pocket
