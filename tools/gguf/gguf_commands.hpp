#pragma once
// The `gguf` tool's commands, separate from its argument parsing (cli.cpp).
#include "pocket/gguf.hpp"

#include <ostream>
#include <string>

namespace pocket::tools {

struct InfoOptions {
    bool json = false;
    size_t array_preview = 8;  // elements of a long array shown in text mode
};

// Header, metadata and tensor table, as text or as JSON (the schema of ../shared's .dump.json).
void gguf_info(const GgufFile& file, const InfoOptions& options, std::ostream& out);

// llama-gguf-hash --xxh64 format: one line per tensor, then one for all tensor data.
void gguf_hash(const GgufFile& file, const std::string& display_name, std::ostream& out);

}  // namespace pocket::tools
