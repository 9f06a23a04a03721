#pragma once
// Errors a client caused (or that the server must report to it), in OpenAI's shape:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "temperature", "code": 400}}
// `code` is the HTTP status, as llama-server writes it; `param` names the offending field
// when there is one, as OpenAI does.
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace pocket::serve {

class ApiError : public std::runtime_error {
public:
    ApiError(int status, std::string message, std::string param = {})
        : std::runtime_error(std::move(message)), status_(status), param_(std::move(param)) {}
    int status() const { return status_; }
    const std::string& param() const { return param_; }

private:
    int status_;
    std::string param_;
};

// OpenAI's error type for an HTTP status.
inline const char* error_type(int status) {
    switch (status) {
        case 401: return "authentication_error";
        case 404: return "not_found_error";
        case 413: return "invalid_request_error";
        case 503: return "unavailable_error";
        default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

inline nlohmann::json error_json(int status, const std::string& message, const std::string& param = {}) {
    nlohmann::json e = {{"message", message}, {"type", error_type(status)}, {"code", status}};
    e["param"] = param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param);
    return {{"error", e}};
}

// Every JSON the server writes goes through here: text that is not UTF-8 (a /detokenize of
// byte tokens) becomes U+FFFD instead of throwing.
inline std::string dump_json(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace pocket::serve
