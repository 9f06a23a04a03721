// The endpoints: OpenAI's (/v1/chat/completions, /v1/completions, /v1/models) and
// llama-server's (/health, /tokenize, /detokenize, /metrics).
#include "api_error.hpp"
#include "chat_page.hpp"
#include "openai_responses.hpp"
#include "request_parsing.hpp"
#include "server.hpp"
#include "sse.hpp"

#include "pocket/tokenizer.hpp"

namespace pocket::serve {

using nlohmann::json;

void Server::add_routes() {
    const auto json_reply = [](httplib::Response& res, const json& j) { res.set_content(dump_json(j), "application/json"); };
    // /health answers without a key, so that a load balancer can probe it.
    const auto health = guarded([this, json_reply](const httplib::Request&, httplib::Response& res) {
        if (!ready()) throw ApiError(503, "Loading model");
        json_reply(res, {{"status", "ok"}});
    }, false, false);
    http_.Get("/health", health);
    http_.Get("/v1/health", health);
    http_.Get("/", guarded([](const httplib::Request&, httplib::Response& res) { res.set_content(chat_page_html(), "text/html; charset=utf-8"); }, false, false));
    http_.Get("/metrics", guarded([this](const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
    }, false));
    const auto models = guarded([this](const httplib::Request& req, httplib::Response& res) { this->models(req, res); });
    http_.Get("/v1/models", models);
    http_.Get("/models", models);
    const auto chat = guarded([this](const httplib::Request& req, httplib::Response& res) { completion(req, res, Api::chat); });
    http_.Post("/v1/chat/completions", chat);
    http_.Post("/chat/completions", chat);
    const auto text = guarded([this](const httplib::Request& req, httplib::Response& res) { completion(req, res, Api::text); });
    http_.Post("/v1/completions", text);
    http_.Post("/completions", text);
    http_.Post("/tokenize", guarded([this](const httplib::Request& req, httplib::Response& res) { tokenize(req, res); }));
    http_.Post("/detokenize", guarded([this](const httplib::Request& req, httplib::Response& res) { detokenize(req, res); }));
}

void Server::models(const httplib::Request&, httplib::Response& res) {
    const HParams& hp = model_->hparams();
    json meta = {{"n_vocab", hp.n_vocab}, {"n_ctx_train", hp.n_ctx_train}, {"n_embd", hp.n_embd},
                 {"n_params", model_->n_params()}, {"size", model_->weight_bytes()}, {"n_ctx_slot", scheduler_->slot_context()},
                 {"n_slots", options_.n_parallel}};
    json model = {{"id", model_name_}, {"object", "model"}, {"created", 0}, {"owned_by", "pocket"}, {"meta", meta}};
    res.set_content(dump_json({{"object", "list"}, {"data", json::array({model})}}), "application/json");
}

std::vector<TokenId> Server::chat_prompt(const json& body) const {
    const std::vector<ChatMessage> messages = parse_messages(body);
    const std::string text = template_->render(messages, /*add_generation_prompt=*/true, bos_text_, eos_text_);
    // BOS once, unless the template already wrote it out.
    const bool add_special = !(!bos_text_.empty() && text.starts_with(bos_text_));
    return model_->tokenizer().tokenize(text, add_special, /*parse_special=*/true);
}

void Server::completion(const httplib::Request& req, httplib::Response& res, Api api) {
    const json body = parse_body(req.body);
    CompletionRequest cr = parse_completion_fields(body);
    if (cr.ignore_eos) {
        const auto eog = model_->tokenizer().vocab().eog_tokens();
        cr.generation.sampling.banned.assign(eog.begin(), eog.end());
    }
    cr.generation.prompt = api == Api::chat ? chat_prompt(body) : parse_prompt(body, model_->tokenizer());
    auto task = std::make_shared<Task>(std::move(cr.generation));
    scheduler_->submit(task);  // 400 when the prompt cannot fit, 503 when stopping
    const ResponseIdentity id = new_identity(api == Api::chat, model_name_);

    if (!cr.stream) {
        // An answer ready within a moment of the slot taking it (and every error) gets a plain
        // response with its status. A longer one is sent chunked, after a space every
        // kKeepAlive while it is generated (JSON allows leading whitespace): a write that fails
        // means the client left, and its slot is freed at the next step. httplib 0.11 gives a
        // handler no other sign of a closed connection.
        constexpr auto kKeepAlive = std::chrono::milliseconds(200);
        if (!task->wait_started() || task->wait_done_for(kKeepAlive)) {
            const std::string text = task->wait();
            const Outcome o = task->outcome();
            if (o.reason == FinishReason::error) throw ApiError(o.error_status ? o.error_status : 503, o.error_message);
            res.set_content(dump_json(completion_body(id, text, o)), "application/json");
            return;
        }
        ++open_responses_;
        res.set_chunked_content_provider(
            "application/json",
            [task, id, kKeepAlive](size_t, httplib::DataSink& sink) {
                if (!task->wait_done_for(kKeepAlive)) return sink.write(" ", 1) || (task->cancel(), false);
                const Outcome o = task->outcome();
                const std::string reply = o.reason == FinishReason::error ? dump_json(error_json(o.error_status, o.error_message))
                                                                         : dump_json(completion_body(id, task->wait(), o));
                if (!sink.write(reply.data(), reply.size())) return false;
                sink.done();
                return true;
            },
            [this, task](bool) {  // ended either way: a finished task ignores the cancel
                task->cancel();
                --open_responses_;
            });
        return;
    }
    // A stream answers 200 once a slot has the request; before that an error keeps its status
    // (503 after the queue timeout).
    if (!task->wait_started()) {
        const Outcome o = task->outcome();
        throw ApiError(o.error_status ? o.error_status : 503, o.error_message);
    }
    res.set_header("Cache-Control", "no-cache");
    ++open_responses_;
    res.set_chunked_content_provider(
        "text/event-stream",
        [task, id, usage = cr.include_usage, first = true](size_t, httplib::DataSink& sink) mutable {
            const auto send = [&](const std::string& s) {
                if (sink.write(s.data(), s.size())) return true;
                task->cancel();  // the client left: its slot is freed at the next step
                return false;
            };
            if (first && id.chat && !send(sse_event(role_chunk(id)))) return false;
            first = false;
            bool done = false;
            for (const std::string& piece : task->take(std::chrono::milliseconds(200), done))
                if (!send(sse_event(text_chunk(id, piece)))) return false;
            if (!done) return sink.is_writable() || (task->cancel(), false);
            const Outcome o = task->outcome();
            if (o.reason == FinishReason::error) {
                if (!send(sse_event(error_json(o.error_status, o.error_message)))) return false;
            } else {
                if (!send(sse_event(finish_chunk(id, o.reason)))) return false;
                if (usage && !send(sse_event(usage_chunk(id, o)))) return false;
            }
            if (!send(kSseDone)) return false;
            sink.done();
            return true;
        },
        [this, task](bool) {  // ended either way: a finished task ignores the cancel
            task->cancel();
            --open_responses_;
        });
}

void Server::tokenize(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req.body);
    const auto it = body.find("content");
    if (it == body.end() || !it->is_string()) throw ApiError(400, "'content' must be a string", "content");
    const bool add_special = optional_bool(body, "add_special", false);
    const bool parse_special = optional_bool(body, "parse_special", true);
    const bool with_pieces = optional_bool(body, "with_pieces", false);
    const Tokenizer& tok = model_->tokenizer();
    const auto ids = tok.tokenize(it->get<std::string>(), add_special, parse_special);
    json tokens = json::array();
    for (TokenId id : ids) {
        if (with_pieces) tokens.push_back({{"id", id}, {"piece", tok.token_to_piece(id)}});
        else tokens.push_back(id);
    }
    res.set_content(dump_json({{"tokens", tokens}}), "application/json");
}

void Server::detokenize(const httplib::Request& req, httplib::Response& res) {
    const json body = parse_body(req.body);
    const auto it = body.find("tokens");
    if (it == body.end()) throw ApiError(400, "'tokens' is required", "tokens");
    const auto ids = parse_token_ids(*it, "tokens", model_->tokenizer().vocab());
    res.set_content(dump_json({{"content", model_->tokenizer().detokenize(ids)}}), "application/json");
}

}  // namespace pocket::serve
