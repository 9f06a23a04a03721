#include "chat_session.hpp"

#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace pocket::tools {

ChatSession::ChatSession(Context& ctx, ChatTemplate chat_template, const SamplerOptions& sampling, ChatOptions options)
    : ctx_(ctx), template_(std::move(chat_template)), sampler_(sampling), options_(std::move(options)) {
    const Tokenizer& tok = ctx_.model().tokenizer();
    const auto& sp = tok.vocab().special();
    if (sp.bos != kNoToken) bos_text_ = tok.token_to_piece(sp.bos, true);
    if (sp.eos != kNoToken) eos_text_ = tok.token_to_piece(sp.eos, true);
    clear();
}

void ChatSession::clear() {
    ctx_.clear();
    sampler_.reset();
    messages_.clear();
    formatted_.clear();
    n_keep_ = 0;
    if (!options_.system_prompt.empty()) {
        // The system prompt is evaluated now, so that the first answer starts sooner, and a
        // context shift always keeps it.
        messages_.push_back({"system", options_.system_prompt});
        formatted_ = template_.render(messages_, false, bos_text_, eos_text_);
        const auto tokens = tokenize_turn(formatted_);
        if (!tokens.empty()) {
            if (tokens.size() >= ctx_.n_ctx()) throw Error("the system prompt ({} tokens) does not fit in the context ({})", tokens.size(), ctx_.n_ctx());
            ctx_.decode(tokens);
        }
        n_keep_ = ctx_.n_past();
    }
    n_keep_ = std::min<uint32_t>(n_keep_ + static_cast<uint32_t>(std::max(options_.keep, 0)), ctx_.n_ctx() / 2);
}

std::vector<TokenId> ChatSession::tokenize_turn(const std::string& text) const {
    // BOS once, at the very start, unless the template already wrote it out as text.
    const bool first = ctx_.n_past() == 0;
    const bool add_special = first && !(!bos_text_.empty() && text.starts_with(bos_text_));
    return ctx_.model().tokenizer().tokenize(text, add_special, /*parse_special=*/true);
}

// Makes room for n more tokens: shifts the context (keeping n_keep) or reports it full.
bool ChatSession::make_room(size_t n, Reply& reply) {
    while (ctx_.n_past() + n > ctx_.n_ctx()) {
        const uint32_t movable = ctx_.n_past() - n_keep_;
        if (!options_.context_shift || movable < 2 || n > ctx_.n_ctx() - n_keep_ - 1) return false;
        const uint32_t n_discard = movable / 2;
        ctx_.shift(n_keep_, n_discard);
        ++reply.context_shifts;
        spdlog::info("context shift: kept {} tokens, dropped {}", n_keep_, n_discard);
    }
    return true;
}

ChatSession::Reply ChatSession::respond(const std::string& user, const std::function<void(std::string_view)>& on_text,
                                        const std::atomic<bool>& stop) {
    Reply reply;
    messages_.push_back({"user", user});
    std::string rendered;
    try {
        rendered = template_.render(messages_, true, bos_text_, eos_text_);
    } catch (...) {
        messages_.pop_back();
        throw;
    }
    // Only the text the template added since the last turn is new to the model.
    std::string delta = rendered.starts_with(formatted_) ? rendered.substr(formatted_.size()) : rendered;
    if (!rendered.starts_with(formatted_)) ctx_.clear();  // the template rewrote history: start again
    const auto tokens = tokenize_turn(delta);
    reply.prompt_tokens = tokens.size();
    if (!make_room(tokens.size() + 1, reply)) {
        messages_.pop_back();
        reply.stop = Stop::context_full;
        return reply;
    }
    for (TokenId t : tokens) sampler_.accept(t);
    if (!tokens.empty()) ctx_.decode(tokens);
    // --keep -1: the first turn is part of the initial prompt that every shift keeps.
    const bool first_turn = messages_.size() == (options_.system_prompt.empty() ? 1u : 2u);
    if (options_.keep < 0 && first_turn) n_keep_ = std::min<uint32_t>(ctx_.n_past(), ctx_.n_ctx() / 2);

    const Tokenizer& tok = ctx_.model().tokenizer();
    TokenStreamDecoder decoder(tok);
    size_t limit = options_.n_predict < 0 ? SIZE_MAX : static_cast<size_t>(options_.n_predict);
    while (true) {
        if (stop.load()) {
            reply.stop = Stop::interrupted;
            break;
        }
        if (reply.generated_tokens >= limit) {
            reply.stop = Stop::limit;
            break;
        }
        const TokenId next = sampler_.sample(ctx_.last_logits());
        sampler_.accept(next);
        ++reply.generated_tokens;
        const bool eog = tok.vocab().is_eog(next);
        // The end-of-turn token goes into the cache too, so that the next turn follows it.
        if (!make_room(1, reply)) {
            reply.stop = Stop::context_full;
            break;
        }
        ctx_.decode(std::span<const TokenId>(&next, 1));
        if (eog) {
            reply.stop = Stop::eog;
            break;
        }
        const std::string piece = decoder.push(next);
        reply.text += piece;
        if (!piece.empty()) on_text(piece);
        bool reverse = false;
        for (const auto& r : options_.reverse_prompts)
            if (!r.empty() && reply.text.ends_with(r)) reverse = true;
        if (reverse) {
            reply.stop = Stop::reverse_prompt;
            break;
        }
    }
    const std::string rest = decoder.finish();
    if (!rest.empty()) {
        reply.text += rest;
        on_text(rest);
    }
    messages_.push_back({"assistant", reply.text});
    try {
        formatted_ = template_.render(messages_, false, bos_text_, eos_text_);
    } catch (const Error&) {
        formatted_ = rendered + reply.text;  // a template that refuses to render a finished turn
    }
    return reply;
}

}  // namespace pocket::tools
