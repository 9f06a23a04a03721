#pragma once
// A conversation with a model, without the terminal: each user message is rendered through
// the chat template, only the text the template adds since the last turn is evaluated (the
// KV cache keeps the rest), and the reply is generated until an end-of-generation token, a
// reverse prompt, the token limit or a stop request.
#include "pocket/chat_template.hpp"
#include "pocket/context.hpp"
#include "pocket/sampler.hpp"

#include <atomic>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace pocket::tools {

struct ChatOptions {
    std::string system_prompt;              // -sys
    std::vector<std::string> reverse_prompts;  // -r
    // --keep: tokens kept at the start on a context shift, after the system prompt; -1 keeps
    // the whole first turn too (llama.cpp's "all of the initial prompt").
    int32_t keep = 0;
    bool context_shift = true;              // --no-context-shift turns it off
    int32_t n_predict = -1;                 // reply length limit (-1: none)
};

class ChatSession {
public:
    ChatSession(Context& ctx, ChatTemplate chat_template, const SamplerOptions& sampling, ChatOptions options);

    enum class Stop { eog, reverse_prompt, limit, interrupted, context_full };
    struct Reply {
        std::string text;
        Stop stop = Stop::eog;
        size_t prompt_tokens = 0;     // tokens evaluated for the user's turn
        size_t generated_tokens = 0;
        size_t context_shifts = 0;
    };

    // Adds the user's message and generates the reply; on_text receives it piece by piece
    // (always whole UTF-8). A true `stop` ends the reply early (Ctrl-C).
    Reply respond(const std::string& user, const std::function<void(std::string_view)>& on_text, const std::atomic<bool>& stop);

    void clear();  // forgets the conversation (the system prompt stays)
    const std::vector<ChatMessage>& messages() const { return messages_; }

private:
    std::vector<TokenId> tokenize_turn(const std::string& text) const;
    bool make_room(size_t n_tokens, Reply& reply);

    Context& ctx_;
    ChatTemplate template_;
    Sampler sampler_;
    ChatOptions options_;
    std::vector<ChatMessage> messages_;
    std::string formatted_;        // the conversation as rendered so far (add_generation_prompt=false)
    uint32_t n_keep_ = 0;          // tokens a context shift keeps: system prompt + --keep (at most half the context)
    std::string bos_text_, eos_text_;
};

}  // namespace pocket::tools
