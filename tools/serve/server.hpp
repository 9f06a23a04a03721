#pragma once
// The HTTP side of `serve`: binds the socket first (so /health answers 503 while the model
// loads), then loads the model and starts the slot scheduler. Routes are in http_routes.cpp,
// the response shapes in openai_responses.cpp.
#include "metrics.hpp"
#include "serve_options.hpp"
#include "slot_scheduler.hpp"

#include "pocket/chat_template.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

namespace pocket::serve {

class Server {
public:
    explicit Server(ServeOptions options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Binds --host:--port and starts answering (503 until load() is done). Throws
    // pocket::Error when the address cannot be bound.
    void start();
    int port() const { return port_; }

    // Loads the model and starts the slots. Throws pocket::Error on a bad model or flags.
    void load();
    bool ready() const { return ready_.load(std::memory_order_acquire); }
    uint32_t slot_context() const { return scheduler_ ? scheduler_->slot_context() : 0; }

    // Ends every request (running ones get what they have, with an error event when
    // streaming; queued ones 503), stops listening and waits for the connections to finish.
    void stop();

    const Metrics& metrics() const { return metrics_; }

private:
    using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
    void add_routes();
    // Wraps a route: API key, body size, model readiness, and ApiError / pocket::Error /
    // anything else into OpenAI-shaped errors (400 / 400 / 500).
    Handler guarded(Handler h, bool needs_model = true, bool needs_key = true) const;

    enum class Api { chat, text };
    void completion(const httplib::Request& req, httplib::Response& res, Api api);
    void tokenize(const httplib::Request& req, httplib::Response& res);
    void detokenize(const httplib::Request& req, httplib::Response& res);
    void models(const httplib::Request& req, httplib::Response& res);
    std::vector<TokenId> chat_prompt(const nlohmann::json& body) const;

    ServeOptions options_;
    std::string model_name_;
    httplib::Server http_;
    std::thread listener_;
    int port_ = 0;
    Metrics metrics_;
    std::unique_ptr<Model> model_;
    std::optional<ChatTemplate> template_;
    std::string bos_text_, eos_text_;
    std::unique_ptr<SlotScheduler> scheduler_;
    std::atomic<bool> ready_{false};
    std::atomic<bool> stopped_{false};
    // Chunked responses (streams, long whole answers) not yet finished: stop() lets them write
    // their last events before the HTTP server stops calling them.
    std::atomic<int> open_responses_{0};
};

}  // namespace pocket::serve
