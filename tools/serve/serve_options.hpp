#pragma once
// Everything `serve` can be told, with llama-server's defaults. Filled by cli.cpp.
#include "pocket/context.hpp"
#include "pocket/model.hpp"

#include <cstddef>
#include <string>

namespace pocket::serve {

struct ServeOptions {
    std::string model;                   // -m; empty: the bundled model
    std::string host = "127.0.0.1";      // --host: loopback unless told otherwise
    int port = 8080;                     // --port; 0: any free port (tests), see Server::port()
    std::string api_key;                 // --api-key: required as "Authorization: Bearer KEY" when set
    std::string chat_template;           // --chat-template NAME|FILE
    std::string alias;                   // --alias: the model's name in responses (default: the file name)
    uint32_t n_ctx = 0;                  // -c: the whole context, split among the slots (0: the model's, at most 4096)
    uint32_t n_parallel = 1;             // -np: slots
    std::string n_gpu_layers = "auto";   // -ngl
    ModelLoadOptions load;
    ContextOptions context;              // -b -ub -t; n_ctx is set per slot at load
    int http_threads = 0;                // --threads-http (0: 1024, so that idle connections never starve the others)
    double queue_timeout_s = 30.0;       // --queue-timeout: how long a request waits for a free slot before 503
    size_t max_body_bytes = 8u << 20;    // --max-body: larger request bodies get 413
    bool verbose = false;                // -v
};

}  // namespace pocket::serve
