#pragma once
// The one error type the library throws. It carries a complete, one-line message that
// names what is wrong and where (file, tensor, key). The library never prints or exits:
// each tool's main() catches this and prints the message.
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace pocket {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}

    template <class... Args>
    explicit Error(fmt::format_string<Args...> f, Args&&... args)
        : std::runtime_error(fmt::format(f, std::forward<Args>(args)...)) {}
};

}  // namespace pocket
