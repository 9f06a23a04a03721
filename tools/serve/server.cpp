#include "server.hpp"

#include "api_error.hpp"

#include "pocket/error.hpp"
#include "pocket/tokenizer.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sys/socket.h>
#include <thread>

namespace pocket::serve {

Server::Server(ServeOptions options) : options_(std::move(options)) {
    model_name_ = !options_.alias.empty() ? options_.alias : std::filesystem::path(options_.model).filename().string();
    metrics_.slots_total = options_.n_parallel;
    // cpp-httplib gives each connection a thread for as long as it is open (an idle keep-alive
    // one until its 5 s read timeout), and a streaming client holds one while it reads. A
    // thousand threads cost little memory (their stacks are only reserved) and let a thousand
    // idle connections wait without delaying anyone else.
    const int threads = options_.http_threads > 0 ? options_.http_threads : static_cast<int>(std::max<uint32_t>(1024, 4 * options_.n_parallel + 16));
    http_.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
    // Bodies over --max-body are read (up to 4 times that, then cut off by httplib) and then
    // refused with 413 in guarded(), so that the client always reads the answer.
    http_.set_payload_max_length(std::max<size_t>(options_.max_body_bytes * 4, 1u << 20));
    add_routes();
    // Statuses no route wrote a body for (404, httplib's own 400 and 413): OpenAI's shape.
    http_.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string message = res.status == 404 ? "no such endpoint: " + req.method + " " + req.path
                              : res.status == 413 ? "the request body is too large"
                                                  : "bad request (" + std::to_string(res.status) + ")";
        res.set_content(dump_json(error_json(res.status, message)), "application/json");
        return httplib::Server::HandlerResponse::Handled;
    }));
    http_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(dump_json(error_json(500, "internal error")), "application/json");
    });
}

Server::~Server() { stop(); }

void Server::start() {
    // Debian's cpp-httplib listens with a backlog of 5: a burst of clients connecting at once
    // (the 32) overflows it and some connections fail. Remember the listening socket
    // and raise its backlog after bind (listen() again on a listening socket only resizes it).
    int listening = -1;
    http_.set_socket_options([&listening](socket_t sock) {
        httplib::default_socket_options(sock);
        listening = sock;
    });
    port_ = options_.port == 0 ? http_.bind_to_any_port(options_.host) : (http_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port_ <= 0) throw Error("cannot listen on {}:{} (in use, or not an address of this machine)", options_.host, options_.port);
    if (listening >= 0) ::listen(listening, SOMAXCONN);
    listener_ = std::thread([this] { http_.listen_after_bind(); });
    // httplib's stop() does nothing to a server not yet running: wait until it runs, so that
    // a stop() right after (a model that fails to load) cannot miss it and hang the join.
    while (!http_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void Server::load() {
    ModelLoadOptions load = options_.load;
    model_ = Model::load(options_.model, load);
    const Model& m = *model_;
    const uint32_t trained = m.hparams().n_ctx_train;
    const uint32_t total = options_.n_ctx ? options_.n_ctx : std::min<uint32_t>(trained ? trained : 4096, 4096);
    const uint32_t per_slot = total / std::max<uint32_t>(options_.n_parallel, 1);
    if (per_slot < 8) throw Error("-c {} split among -np {} slots leaves {} tokens per slot: too few", total, options_.n_parallel, per_slot);
    template_ = chat_template_for(m.file(), m.tokenizer().vocab(), options_.chat_template);
    const auto& sp = m.tokenizer().vocab().special();
    if (sp.bos != kNoToken) bos_text_ = m.tokenizer().token_to_piece(sp.bos, true);
    if (sp.eos != kNoToken) eos_text_ = m.tokenizer().token_to_piece(sp.eos, true);

    SchedulerOptions so;
    so.n_slots = options_.n_parallel;
    so.context = options_.context;
    so.context.n_ctx = per_slot * std::max<uint32_t>(options_.n_parallel, 1);
    so.queue_timeout = std::chrono::milliseconds(static_cast<int64_t>(options_.queue_timeout_s * 1000));
    scheduler_ = std::make_unique<SlotScheduler>(m, so, metrics_);
    ready_.store(true, std::memory_order_release);
}

void Server::stop() {
    if (stopped_.exchange(true)) return;
    if (scheduler_) scheduler_->stop();  // every request gets its answer first
    // Every task has its outcome now; httplib stops calling content providers as soon as it
    // stops, so let the open responses write their last events (a stream's error and
    // [DONE]) first, for a few seconds at most.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (open_responses_.load() > 0 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    http_.stop();
    if (listener_.joinable()) listener_.join();
}

Server::Handler Server::guarded(Handler h, bool needs_model, bool needs_key) const {
    return [this, h = std::move(h), needs_model, needs_key](const httplib::Request& req, httplib::Response& res) {
        try {
            if (needs_key && !options_.api_key.empty()) {
                const std::string bearer = req.get_header_value("Authorization");
                const bool ok = bearer == "Bearer " + options_.api_key || req.get_header_value("X-Api-Key") == options_.api_key;
                if (!ok) throw ApiError(401, "invalid or missing API key (send \"Authorization: Bearer KEY\")");
            }
            if (req.body.size() > options_.max_body_bytes)
                throw ApiError(413, fmt::format("the request body is {} bytes, more than the {} allowed (--max-body)", req.body.size(), options_.max_body_bytes));
            if (needs_model && !ready()) throw ApiError(503, "Loading model");
            h(req, res);
        } catch (const ApiError& e) {
            res.status = e.status();
            res.set_content(dump_json(error_json(e.status(), e.what(), e.param())), "application/json");
        } catch (const Error& e) {
            // The library's errors on request data (a template refusing the conversation, ...).
            res.status = 400;
            res.set_content(dump_json(error_json(400, e.what())), "application/json");
        } catch (const std::exception& e) {
            spdlog::error("{} {}: {}", req.method, req.path, e.what());
            res.status = 500;
            res.set_content(dump_json(error_json(500, std::string("internal error: ") + e.what())), "application/json");
        }
    };
}

}  // namespace pocket::serve
