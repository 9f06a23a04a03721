// GGUF v3 writer: metadata is encoded as it is set; tensor data is streamed to a temporary
// file beside the target, which is renamed onto the target only once complete and synced.
#include "pocket/gguf_writer.hpp"

#include "pocket/error.hpp"
#include "pocket/output_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace pocket {
namespace {

template <class T> void put_le(std::vector<uint8_t>& out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
}

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

GgufWriter::GgufWriter(std::string path, uint64_t alignment) : path_(std::move(path)), alignment_(alignment) {
    if (alignment_ == 0 || (alignment_ & (alignment_ - 1)) != 0) throw Error("{}: alignment {} is not a power of two", path_, alignment_);
}

GgufWriter::~GgufWriter() { abort_file(); }

void GgufWriter::abort_file() noexcept {
    if (fp_) {
        std::fclose(fp_);
        fp_ = nullptr;
    }
    if (!finished_ && !tmp_path_.empty()) {
        ::unlink(tmp_path_.c_str());
        forget_temporary(tmp_path_);
        tmp_path_.clear();
    }
}

void GgufWriter::encode_string(std::vector<uint8_t>& out, std::string_view s) {
    put_le<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

void GgufWriter::encode_value(std::vector<uint8_t>& out, const GgufValue& v) {
    switch (v.type) {
        case GgufType::STRING: encode_string(out, v.as_string()); return;
        case GgufType::ARRAY: {
            put_le<uint32_t>(out, static_cast<uint32_t>(v.elem_type));
            put_le<uint64_t>(out, v.count());
            if (const size_t es = gguf_scalar_size(v.elem_type)) {
                const auto* b = static_cast<const uint8_t*>(v.raw());
                out.insert(out.end(), b, b + v.count() * es);
            } else if (v.elem_type == GgufType::STRING) {
                for (auto s : v.strings()) encode_string(out, s);
            } else {
                for (const auto& item : v.items()) encode_value(out, item);
            }
            return;
        }
        default: {
            const auto* b = static_cast<const uint8_t*>(v.raw());
            out.insert(out.end(), b, b + gguf_scalar_size(v.type));  // little-endian host
            return;
        }
    }
}

void GgufWriter::put(std::string_view key, std::vector<uint8_t> encoded) {
    if (fp_) throw Error("{}: metadata set after begin()", path_);
    for (auto& e : kv_)
        if (e.key == key) {
            e.encoded = std::move(encoded);
            return;
        }
    kv_.push_back({std::string(key), std::move(encoded)});
}

template <class T> void GgufWriter::set(std::string_view key, T value) {
    std::vector<uint8_t> e;
    put_le<uint32_t>(e, static_cast<uint32_t>(gguf_type_of<T>()));
    if constexpr (std::is_same_v<T, bool>) put_le<uint8_t>(e, value ? 1 : 0);
    else put_le<T>(e, value);
    put(key, std::move(e));
}

void GgufWriter::set_string(std::string_view key, std::string_view value) {
    std::vector<uint8_t> e;
    put_le<uint32_t>(e, static_cast<uint32_t>(GgufType::STRING));
    encode_string(e, value);
    put(key, std::move(e));
}

template <class E> void GgufWriter::set_array(std::string_view key, std::span<const E> values) {
    std::vector<uint8_t> e;
    put_le<uint32_t>(e, static_cast<uint32_t>(GgufType::ARRAY));
    put_le<uint32_t>(e, static_cast<uint32_t>(gguf_type_of<E>()));
    put_le<uint64_t>(e, values.size());
    for (const E& v : values) {
        if constexpr (std::is_same_v<E, bool>) put_le<uint8_t>(e, v ? 1 : 0);
        else put_le<E>(e, v);
    }
    put(key, std::move(e));
}

void GgufWriter::set_strings(std::string_view key, std::span<const std::string> values) {
    std::vector<std::string_view> views(values.begin(), values.end());
    set_strings(key, std::span<const std::string_view>(views));
}

void GgufWriter::set_strings(std::string_view key, std::span<const std::string_view> values) {
    std::vector<uint8_t> e;
    put_le<uint32_t>(e, static_cast<uint32_t>(GgufType::ARRAY));
    put_le<uint32_t>(e, static_cast<uint32_t>(GgufType::STRING));
    put_le<uint64_t>(e, values.size());
    for (auto s : values) encode_string(e, s);
    put(key, std::move(e));
}

void GgufWriter::set_value(std::string_view key, const GgufValue& value) {
    std::vector<uint8_t> e;
    put_le<uint32_t>(e, static_cast<uint32_t>(value.type));
    encode_value(e, value);
    put(key, std::move(e));
}

void GgufWriter::set_encoded_array(std::string_view key, GgufType elem_type, uint64_t count, std::vector<uint8_t> encoded) {
    std::vector<uint8_t> e;
    put_le<uint32_t>(e, static_cast<uint32_t>(GgufType::ARRAY));
    put_le<uint32_t>(e, static_cast<uint32_t>(elem_type));
    put_le<uint64_t>(e, count);
    e.insert(e.end(), encoded.begin(), encoded.end());
    put(key, std::move(e));
}

bool GgufWriter::has(std::string_view key) const {
    for (const auto& e : kv_)
        if (e.key == key) return true;
    return false;
}

void GgufWriter::remove(std::string_view key) {
    std::erase_if(kv_, [&](const Entry& e) { return e.key == key; });
}

size_t GgufWriter::add_tensor(std::string_view name, GgmlType type, std::span<const int64_t> ne) {
    if (fp_) throw Error("{}: tensor '{}' declared after begin()", path_, name);
    if (ne.empty() || ne.size() > 4) throw Error("{}: tensor '{}' must have 1 to 4 dimensions", path_, name);
    for (const auto& t : tensors_)
        if (t.name == name) throw Error("{}: duplicate tensor '{}'", path_, name);
    Tensor t{std::string(name), type, {1, 1, 1, 1}, static_cast<uint32_t>(ne.size()), 0, 0};
    uint64_t n = 1;
    for (size_t i = 0; i < ne.size(); ++i) {
        if (ne[i] < 0) throw Error("{}: tensor '{}' has a negative dimension", path_, name);
        t.ne[i] = ne[i];
        if (i > 0) n *= static_cast<uint64_t>(ne[i]);
    }
    auto row = ggml_row_bytes(type, static_cast<uint64_t>(t.ne[0]));
    if (!row) throw Error("{}: tensor '{}': row length {} is not a multiple of the {} block size", path_, name, t.ne[0], ggml_type_info(type).name);
    t.n_bytes = *row * n;
    t.offset = tensors_.empty() ? 0 : align_up(tensors_.back().offset + tensors_.back().n_bytes, alignment_);
    tensors_.push_back(std::move(t));
    return tensors_.size() - 1;
}

uint64_t GgufWriter::tensor_bytes(size_t index) const { return tensors_.at(index).n_bytes; }

void GgufWriter::write_raw(const void* data, size_t n) {
    if (n && std::fwrite(data, 1, n, fp_) != n) {
        const int err = errno;
        abort_file();
        throw Error("{}: write failed: {}", path_, std::strerror(err));
    }
}

void GgufWriter::write_padding(uint64_t n) {
    static const uint8_t zeros[256] = {};
    while (n) {
        const size_t k = static_cast<size_t>(std::min<uint64_t>(n, sizeof zeros));
        write_raw(zeros, k);
        n -= k;
    }
}

void GgufWriter::begin() {
    if (fp_ || finished_) throw Error("{}: begin() called twice", path_);
    if (alignment_ != 32 && !has("general.alignment")) set<uint32_t>("general.alignment", static_cast<uint32_t>(alignment_));
    // The temporary lives in the target's directory so that the final rename is atomic; it is
    // removed on SIGINT / SIGTERM when the tool asked for that (pocket/output_file.hpp).
    const int fd = create_temporary_beside(path_, tmp_path_);
    fp_ = ::fdopen(fd, "wb");
    if (!fp_) {
        ::close(fd);
        abort_file();
        throw Error("{}: cannot open the temporary file", path_);
    }

    std::vector<uint8_t> h{'G', 'G', 'U', 'F'};
    put_le<uint32_t>(h, 3);
    put_le<uint64_t>(h, tensors_.size());
    put_le<uint64_t>(h, kv_.size());
    for (const auto& e : kv_) {
        encode_string(h, e.key);
        h.insert(h.end(), e.encoded.begin(), e.encoded.end());
    }
    for (const auto& t : tensors_) {
        encode_string(h, t.name);
        put_le<uint32_t>(h, t.n_dims);
        for (uint32_t d = 0; d < t.n_dims; ++d) put_le<int64_t>(h, t.ne[d]);
        put_le<uint32_t>(h, static_cast<uint32_t>(t.type));
        put_le<uint64_t>(h, t.offset);
    }
    h.resize(static_cast<size_t>(align_up(h.size(), alignment_)), 0);
    write_raw(h.data(), h.size());
    current_ = 0;
    written_in_current_ = 0;
    data_written_ = 0;
}

void GgufWriter::write(const void* data, size_t n) {
    if (!fp_) throw Error("{}: write() before begin()", path_);
    const auto* p = static_cast<const uint8_t*>(data);
    while (n > 0) {
        if (current_ >= tensors_.size()) {
            abort_file();
            throw Error("{}: more tensor data written than declared", path_);
        }
        const Tensor& t = tensors_[current_];
        const uint64_t room = t.n_bytes - written_in_current_;
        const size_t k = static_cast<size_t>(std::min<uint64_t>(room, n));
        write_raw(p, k);
        p += k;
        n -= k;
        written_in_current_ += k;
        data_written_ += k;
        if (written_in_current_ == t.n_bytes) {
            // gguf-py and ggml pad after every tensor, the last one included.
            const uint64_t padded = align_up(t.offset + t.n_bytes, alignment_);
            write_padding(padded - (t.offset + t.n_bytes));
            ++current_;
            written_in_current_ = 0;
        }
    }
}

void GgufWriter::finish() {
    if (!fp_) throw Error("{}: finish() without begin()", path_);
    // Zero-byte tensors need no write() call: step past them.
    while (current_ < tensors_.size() && tensors_[current_].n_bytes == 0 && written_in_current_ == 0) ++current_;
    if (current_ != tensors_.size()) {
        const std::string name = tensors_[current_].name;
        abort_file();
        throw Error("{}: tensor '{}' is missing data", path_, name);
    }
    if (std::fflush(fp_) != 0 || ::fsync(::fileno(fp_)) != 0) {
        const int err = errno;
        abort_file();
        throw Error("{}: cannot flush: {}", path_, std::strerror(err));
    }
    std::fclose(fp_);
    fp_ = nullptr;
    if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        abort_file();
        throw Error("{}: cannot rename the temporary file into place: {}", path_, std::strerror(err));
    }
    forget_temporary(tmp_path_);
    finished_ = true;
}

#define POCKET_INSTANTIATE(T)                                                     \
    template void GgufWriter::set<T>(std::string_view, T);                        \
    template void GgufWriter::set_array<T>(std::string_view, std::span<const T>);
POCKET_INSTANTIATE(uint8_t)
POCKET_INSTANTIATE(int8_t)
POCKET_INSTANTIATE(uint16_t)
POCKET_INSTANTIATE(int16_t)
POCKET_INSTANTIATE(uint32_t)
POCKET_INSTANTIATE(int32_t)
POCKET_INSTANTIATE(uint64_t)
POCKET_INSTANTIATE(int64_t)
POCKET_INSTANTIATE(float)
POCKET_INSTANTIATE(double)
POCKET_INSTANTIATE(bool)
#undef POCKET_INSTANTIATE

}  // namespace pocket
