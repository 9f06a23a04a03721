// The conversation logic of `run -i` on the bundled model, without a terminal: what each
// turn evaluates, and every way an answer can end.
#include "chat_session.hpp"
#include "pocket/chat_template.hpp"
#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"
#include "run_options.hpp"

#include <gtest/gtest.h>

using namespace pocket;
using pocket::tools::ChatOptions;
using pocket::tools::ChatSession;

namespace {

struct Bundled {
    std::unique_ptr<Model> model = Model::load(tools::bundled_model_path());
    ChatTemplate chatml = chat_template_for(model->file(), model->tokenizer().vocab(), "chatml");

    // Greedy, and --ignore-eos, so that an answer's end is decided by what the test sets.
    SamplerOptions sampling(bool ignore_eos = true) const {
        SamplerOptions s;
        s.temperature = 0;
        if (ignore_eos) {
            const auto eog = model->tokenizer().vocab().eog_tokens();
            s.banned.assign(eog.begin(), eog.end());
        }
        return s;
    }
};

const std::atomic<bool> kNoStop{false};
const auto kIgnoreText = [](std::string_view) {};

}  // namespace

TEST(ChatSession, EachTurnEvaluatesOnlyItsNewTokens) {
    Bundled b;
    Context ctx(*b.model, {.n_ctx = 512, .n_threads = 1});
    ChatSession chat(ctx, b.chatml, b.sampling(), {.n_predict = 12});
    const auto first = chat.respond("Tell me a story.", kIgnoreText, kNoStop);
    EXPECT_EQ(first.stop, ChatSession::Stop::limit);
    EXPECT_EQ(first.generated_tokens, 12u);
    const uint32_t after_first = ctx.n_past();
    EXPECT_EQ(after_first, first.prompt_tokens + first.generated_tokens);

    // What the second turn must add: the template's rendering of the whole conversation,
    // less the rendering of the first exchange, which the cache already holds.
    std::vector<ChatMessage> msgs{{"user", "Tell me a story."}, {"assistant", first.text}};
    const std::string before = b.chatml.render(msgs, false);
    msgs.push_back({"user", "And then?"});
    const std::string whole = b.chatml.render(msgs, true);
    ASSERT_TRUE(whole.starts_with(before));
    const Tokenizer& tok = b.model->tokenizer();
    const auto new_tokens = tok.tokenize(whole.substr(before.size()), false, true);

    const auto second = chat.respond("And then?", kIgnoreText, kNoStop);
    EXPECT_EQ(second.prompt_tokens, new_tokens.size());
    EXPECT_LT(second.prompt_tokens, tok.tokenize(whole, true, true).size() / 2);
    EXPECT_EQ(ctx.n_past(), after_first + second.prompt_tokens + second.generated_tokens);
    ASSERT_EQ(chat.messages().size(), 4u);
    EXPECT_EQ(chat.messages()[3].content, second.text);

    chat.clear();
    EXPECT_EQ(ctx.n_past(), 0u);
    EXPECT_TRUE(chat.messages().empty());
}

TEST(ChatSession, SystemPromptIsEvaluatedFirstAndSurvivesClear) {
    Bundled b;
    Context ctx(*b.model, {.n_ctx = 256, .n_threads = 1});
    ChatSession chat(ctx, b.chatml, b.sampling(), {.system_prompt = "You tell stories.", .n_predict = 4});
    const std::vector<ChatMessage> sys{{"system", "You tell stories."}};
    const auto sys_tokens = b.model->tokenizer().tokenize(b.chatml.render(sys, false), true, true);
    EXPECT_EQ(ctx.n_past(), sys_tokens.size());
    chat.respond("Hi", kIgnoreText, kNoStop);
    chat.clear();
    EXPECT_EQ(ctx.n_past(), sys_tokens.size());
    ASSERT_EQ(chat.messages().size(), 1u);
    EXPECT_EQ(chat.messages()[0].role, "system");
}

TEST(ChatSession, ReversePromptEndsTheAnswer) {
    Bundled b;
    Context ctx(*b.model, {.n_ctx = 512, .n_threads = 1});
    ChatSession chat(ctx, b.chatml, b.sampling(), {.reverse_prompts = {"e"}, .n_predict = 200});
    const auto r = chat.respond("Once upon a time", kIgnoreText, kNoStop);
    EXPECT_EQ(r.stop, ChatSession::Stop::reverse_prompt);
    EXPECT_TRUE(r.text.ends_with("e")) << r.text;
    EXPECT_EQ(r.text.find('e'), r.text.size() - 1) << "the answer ran past the first 'e': " << r.text;
}

TEST(ChatSession, EndOfGenerationTokenEndsTheAnswer) {
    Bundled b;
    Context ctx(*b.model, {.n_ctx = 1024, .n_threads = 1});
    SamplerOptions only_eos = b.sampling(false);
    // Ban every token but the end-of-generation ones: the first token sampled ends the turn.
    const auto& vocab = b.model->tokenizer().vocab();
    for (TokenId id = 0; id < static_cast<TokenId>(b.model->hparams().n_vocab); ++id)
        if (!vocab.is_eog(id)) only_eos.banned.push_back(id);
    ChatSession chat(ctx, b.chatml, only_eos, {.n_predict = 50});
    const auto r = chat.respond("Hello", kIgnoreText, kNoStop);
    EXPECT_EQ(r.stop, ChatSession::Stop::eog);
    EXPECT_EQ(r.generated_tokens, 1u);
    EXPECT_TRUE(r.text.empty()) << "the end-of-turn token is not printed";
}

TEST(ChatSession, StopRequestEndsTheAnswerAndTheChatGoesOn) {
    Bundled b;
    Context ctx(*b.model, {.n_ctx = 512, .n_threads = 1});
    ChatSession chat(ctx, b.chatml, b.sampling(), {.n_predict = 300});
    std::atomic<bool> stop{false};
    size_t pieces = 0;
    const auto r = chat.respond("Once upon a time", [&](std::string_view) { stop = ++pieces == 3; }, stop);
    EXPECT_EQ(r.stop, ChatSession::Stop::interrupted);
    EXPECT_LT(r.generated_tokens, 10u);
    stop = false;
    const auto next = chat.respond("Go on", kIgnoreText, stop);
    EXPECT_EQ(next.stop, ChatSession::Stop::limit);
}

TEST(ChatSession, FullContextShiftsOrStops) {
    Bundled b;
    {
        Context ctx(*b.model, {.n_ctx = 128, .n_threads = 1});
        ChatSession chat(ctx, b.chatml, b.sampling(), {.system_prompt = "Be kind.", .context_shift = false});
        const auto r = chat.respond("Once upon a time", kIgnoreText, kNoStop);
        EXPECT_EQ(r.stop, ChatSession::Stop::context_full);
        EXPECT_EQ(r.context_shifts, 0u);
        EXPECT_EQ(ctx.n_past(), 128u);
    }
    Context ctx(*b.model, {.n_ctx = 128, .n_threads = 1});
    ChatSession chat(ctx, b.chatml, b.sampling(), {.system_prompt = "Be kind.", .n_predict = 300});
    const uint32_t system_tokens = ctx.n_past();
    const auto r = chat.respond("Once upon a time", kIgnoreText, kNoStop);
    EXPECT_EQ(r.stop, ChatSession::Stop::limit);
    EXPECT_EQ(r.generated_tokens, 300u);
    EXPECT_GE(r.context_shifts, 2u);
    EXPECT_GT(system_tokens, 0u);
    EXPECT_LE(ctx.n_past(), 128u);
}
