#pragma once
// GGUF v3 writer. Metadata and tensor infos are declared first; then the file is opened
// (a temporary beside the target), the header written, and tensor data streamed in
// declaration order, so a model is never held in memory. finish() flushes, fsyncs and
// renames onto the target; if the writer is destroyed before that, the temporary is removed
// and nothing ever appears under the target name.
#include "pocket/ggml_type.hpp"
#include "pocket/gguf.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pocket {

class GgufWriter {
public:
    explicit GgufWriter(std::string path, uint64_t alignment = 32);
    ~GgufWriter();
    GgufWriter(const GgufWriter&) = delete;
    GgufWriter& operator=(const GgufWriter&) = delete;

    // --- metadata (in the order given; setting a key twice replaces it in place) ---
    template <class T> void set(std::string_view key, T value);  // any GGUF scalar type
    void set_string(std::string_view key, std::string_view value);
    template <class E> void set_array(std::string_view key, std::span<const E> values);
    void set_strings(std::string_view key, std::span<const std::string> values);
    void set_strings(std::string_view key, std::span<const std::string_view> values);
    // Any value read from another file, nested arrays included (used by quantize/convert).
    void set_value(std::string_view key, const GgufValue& value);
    // An array of already-encoded elements, for building nested arrays by hand.
    void set_encoded_array(std::string_view key, GgufType elem_type, uint64_t count, std::vector<uint8_t> encoded);
    bool has(std::string_view key) const;
    void remove(std::string_view key);

    // --- tensors ---
    // Declares a tensor; ne in ggml order (ne[0] fastest). Returns its index.
    size_t add_tensor(std::string_view name, GgmlType type, std::span<const int64_t> ne);
    uint64_t tensor_bytes(size_t index) const;

    // Opens the temporary file and writes header, metadata and tensor infos.
    void begin();
    // Appends data for the next tensor; a tensor may arrive in several pieces.
    // Padding between tensors is written automatically.
    void write(const void* data, size_t n);
    // Checks every declared byte was written, fsyncs, renames onto the target.
    void finish();

    const std::string& path() const { return path_; }

    // Encoders for set_encoded_array.
    static void encode_string(std::vector<uint8_t>& out, std::string_view s);
    static void encode_value(std::vector<uint8_t>& out, const GgufValue& v);  // payload, no type tag

private:
    struct Tensor {
        std::string name;
        GgmlType type;
        std::array<int64_t, 4> ne;
        uint32_t n_dims;
        uint64_t n_bytes;
        uint64_t offset;
    };
    struct Entry {
        std::string key;
        std::vector<uint8_t> encoded;  // type tag + payload
    };
    void put(std::string_view key, std::vector<uint8_t> encoded);
    void write_raw(const void* data, size_t n);
    void write_padding(uint64_t n);
    void abort_file() noexcept;

    std::string path_;
    std::string tmp_path_;
    uint64_t alignment_;
    std::vector<Entry> kv_;
    std::vector<Tensor> tensors_;
    std::FILE* fp_ = nullptr;
    size_t current_ = 0;         // tensor being streamed
    uint64_t written_in_current_ = 0;
    uint64_t data_written_ = 0;  // bytes of the data section so far
    bool finished_ = false;
};

}  // namespace pocket
