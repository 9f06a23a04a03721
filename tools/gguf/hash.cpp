#include "gguf_commands.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <memory>

namespace pocket::tools {

void gguf_hash(const GgufFile& file, const std::string& display_name, std::ostream& out) {
    std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> all(XXH64_createState(), &XXH64_freeState);
    XXH64_reset(all.get(), 0);
    for (const auto& t : file.tensors()) {
        const uint64_t h = XXH64(t.data, static_cast<size_t>(t.n_bytes), 0);
        XXH64_update(all.get(), t.data, static_cast<size_t>(t.n_bytes));
        out << fmt::format("xxh64     {:016x}  {}:{}\n", h, display_name, t.name);
    }
    out << fmt::format("xxh64     {:016x}  {}\n", XXH64_digest(all.get()), display_name);
}

}  // namespace pocket::tools
