// GGUF parsing and validation. Every count, length and offset read from the file is
// checked against the bytes that remain before it is used, so a hostile file can neither
// run past the end, nor make us allocate more than a small multiple of its own size,
// nor loop for long.
#include "gguf/mapped_file.hpp"
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_set>

namespace pocket {

namespace {
constexpr uint32_t kMagicGguf = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kMagicGgml = 0x67676d6c;  // old unversioned ggml ("lmgg" on disk)
constexpr uint32_t kMagicGgmf = 0x67676d66;
constexpr uint32_t kMagicGgjt = 0x67676a74;
constexpr uint64_t kDefaultAlignment = 32;
constexpr int kMaxArrayDepth = 8;  // nested arrays deeper than this are refused (stack safety)
}  // namespace

class GgufParser {
public:
    GgufParser(GgufFile& out, const uint8_t* data, uint64_t size) : f_(out), p_(data), size_(size) {}

    void parse() {
        parse_header();
        parse_metadata();
        parse_alignment();
        parse_tensor_infos();
        f_.data_offset_ = align_up(pos_, f_.alignment_);
        validate_tensor_data();
    }

private:
    [[noreturn]] void fail(const std::string& what) const { throw Error("{}: {}", f_.path_, what); }

    void need(uint64_t n, const char* what) const {
        if (n > size_ - pos_)
            fail(fmt::format("truncated file: {} needs {} bytes at offset {}, but the file is {} bytes", what, n, pos_, size_));
    }

    template <class T> T read(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, p_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }

    std::string_view read_string(const char* what) {
        const uint64_t len = read<uint64_t>(what);
        need(len, what);
        std::string_view s(reinterpret_cast<const char*>(p_ + pos_), static_cast<size_t>(len));
        pos_ += len;
        return s;
    }

    static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

    void parse_header() {
        if (size_ < 4) fail(fmt::format("truncated file: {} bytes, too short for a GGUF header", size_));
        uint32_t magic;
        std::memcpy(&magic, p_, 4);
        if (magic == kMagicGgml || magic == kMagicGgmf || magic == kMagicGgjt) {
            const char* name = magic == kMagicGgml ? "GGML" : magic == kMagicGgmf ? "GGMF" : "GGJT";
            fail(fmt::format("old {} format (pre-GGUF, 2023): convert it to GGUF with llama.cpp's "
                             "convert_llama_ggml_to_gguf.py, or download a GGUF version of the model", name));
        }
        if (magic != kMagicGguf) fail("not a GGUF file (bad magic)");
        pos_ = 4;
        const uint32_t version = read<uint32_t>("header version");
        if (version == 1) fail("GGUF v1 is not supported (only v2 and v3); re-convert the model with a current llama.cpp");
        if ((version & 0xFFFF) == 0 && version != 0)
            fail(fmt::format("big-endian GGUF (version reads as {:#x}); only little-endian files are supported", version));
        if (version != 2 && version != 3) fail(fmt::format("unsupported GGUF version {}", version));
        f_.version_ = version;
        n_tensors_ = read<uint64_t>("tensor count");
        n_kv_ = read<uint64_t>("metadata count");
        // Each metadata entry takes at least 13 bytes (key length, type, 1-byte value),
        // each tensor info at least 24 (name length, n_dims, type, offset): bound the
        // counts by what the file can hold before reserving anything.
        if (n_kv_ > (size_ - pos_) / 13) fail(fmt::format("truncated file: header claims {} metadata entries, more than the file can hold", n_kv_));
        if (n_tensors_ > (size_ - pos_) / 24) fail(fmt::format("truncated file: header claims {} tensors, more than the file can hold", n_tensors_));
    }

    void parse_value(GgufValue& v, GgufType type, const std::string& where, int depth) {
        v.type = type;
        switch (type) {
            case GgufType::U8: case GgufType::I8: case GgufType::BOOL:
                v.scalar_ = read<uint8_t>(where.c_str());
                if (type == GgufType::BOOL) v.scalar_ = v.scalar_ != 0;
                return;
            case GgufType::U16: case GgufType::I16: v.scalar_ = read<uint16_t>(where.c_str()); return;
            case GgufType::U32: case GgufType::I32: case GgufType::F32: v.scalar_ = read<uint32_t>(where.c_str()); return;
            case GgufType::U64: case GgufType::I64: case GgufType::F64: v.scalar_ = read<uint64_t>(where.c_str()); return;
            case GgufType::STRING: v.string_ = read_string(where.c_str()); return;
            case GgufType::ARRAY: parse_array(v, where, depth); return;
        }
        fail(fmt::format("{}: unknown metadata value type {}", where, static_cast<uint32_t>(type)));
    }

    GgufType read_value_type(const std::string& where) {
        const uint32_t t = read<uint32_t>(where.c_str());
        if (t > static_cast<uint32_t>(GgufType::F64)) fail(fmt::format("{}: unknown metadata value type {}", where, t));
        return static_cast<GgufType>(t);
    }

    void parse_array(GgufValue& v, const std::string& where, int depth) {
        if (depth >= kMaxArrayDepth) fail(fmt::format("{}: arrays nested deeper than {}", where, kMaxArrayDepth));
        v.elem_type = read_value_type(where);
        const uint64_t count = read<uint64_t>(where.c_str());
        v.count_ = count;
        const size_t esize = gguf_scalar_size(v.elem_type);
        if (esize > 0) {
            if (count > (size_ - pos_) / esize)
                fail(fmt::format("truncated file: {} is an array of {} {} values, longer than the rest of the file", where, count, gguf_type_name(v.elem_type)));
            const uint64_t bytes = count * esize;
            v.array_.resize(static_cast<size_t>((bytes + 7) / 8));
            if (bytes) std::memcpy(v.array_.data(), p_ + pos_, static_cast<size_t>(bytes));
            if (v.elem_type == GgufType::BOOL) {
                // Only 0 and 1 are valid bools in C++: normalise before handing out a span<bool>.
                auto* b = reinterpret_cast<uint8_t*>(v.array_.data());
                for (uint64_t i = 0; i < count; ++i) b[i] = b[i] != 0;
            }
            pos_ += bytes;
        } else if (v.elem_type == GgufType::STRING) {
            if (count > (size_ - pos_) / 8)
                fail(fmt::format("truncated file: {} is an array of {} strings, longer than the rest of the file", where, count));
            v.strings_.reserve(static_cast<size_t>(count));
            for (uint64_t i = 0; i < count; ++i) v.strings_.push_back(read_string(where.c_str()));
        } else {  // arrays of arrays: each one at least 12 bytes (type + count)
            if (count > (size_ - pos_) / 12)
                fail(fmt::format("truncated file: {} is an array of {} arrays, longer than the rest of the file", where, count));
            v.items_.resize(static_cast<size_t>(count));
            for (auto& item : v.items_) parse_value(item, GgufType::ARRAY, where, depth + 1);
        }
    }

    void parse_metadata() {
        f_.kv_.reserve(static_cast<size_t>(n_kv_));
        std::unordered_set<std::string_view> seen;
        for (uint64_t i = 0; i < n_kv_; ++i) {
            GgufKeyValue kv;
            kv.key = read_string(fmt::format("metadata key #{}", i).c_str());
            const std::string where = fmt::format("metadata key '{}'", kv.key);
            if (!seen.insert(kv.key).second) fail(fmt::format("duplicate {}", where));
            parse_value(kv.value, read_value_type(where), where, 0);
            f_.kv_.push_back(std::move(kv));
        }
    }

    void parse_alignment() {
        f_.alignment_ = kDefaultAlignment;
        const GgufValue* a = f_.find("general.alignment");
        if (!a) return;
        auto v = a->as_uint();
        if (a->type != GgufType::U32 || !v || *v == 0 || (*v & (*v - 1)) != 0)
            fail("general.alignment must be a u32 power of two");
        f_.alignment_ = *v;
    }

    void parse_tensor_infos() {
        f_.tensors_.reserve(static_cast<size_t>(n_tensors_));
        std::unordered_set<std::string_view> seen;
        for (uint64_t i = 0; i < n_tensors_; ++i) {
            GgufTensorInfo t;
            t.name = read_string(fmt::format("tensor info #{}", i).c_str());
            const std::string where = fmt::format("tensor '{}'", t.name);
            if (!seen.insert(t.name).second) fail(fmt::format("duplicate {}", where));
            t.n_dims = read<uint32_t>(where.c_str());
            if (t.n_dims > 4) fail(fmt::format("{} has {} dimensions (at most 4)", where, t.n_dims));
            uint64_t n_elements = 1;
            for (uint32_t d = 0; d < t.n_dims; ++d) {
                const int64_t ne = read<int64_t>(where.c_str());
                if (ne < 0) fail(fmt::format("{} has a negative dimension {}", where, ne));
                t.ne[d] = ne;
                if (ne != 0 && n_elements > static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(ne))
                    fail(fmt::format("{} has dimensions whose product overflows", where));
                n_elements *= static_cast<uint64_t>(ne);
            }
            const uint32_t type_id = read<uint32_t>(where.c_str());
            const GgmlTypeInfo* info = ggml_type_info(type_id);
            if (!info) fail(fmt::format("{} has unknown ggml type id {}", where, type_id));
            t.type = info->type;
            t.offset = read<uint64_t>(where.c_str());
            if (t.ne[0] % info->block_size != 0)
                fail(fmt::format("{}: row length {} is not a multiple of the {} block size {}", where, t.ne[0], info->name, info->block_size));
            const uint64_t blocks = n_elements / info->block_size;
            if (blocks > UINT64_MAX / info->block_bytes) fail(fmt::format("{} is too large", where));
            t.n_bytes = blocks * info->block_bytes;
            f_.tensors_.push_back(t);
        }
    }

    void validate_tensor_data() {
        const uint64_t data_offset = f_.data_offset_;
        for (auto& t : f_.tensors_) {
            const std::string where = fmt::format("tensor '{}'", t.name);
            if (t.offset % f_.alignment_ != 0)
                fail(fmt::format("{}: data offset {} is not a multiple of the alignment {}", where, t.offset, f_.alignment_));
            if (data_offset > size_ || t.offset > size_ - data_offset || t.n_bytes > size_ - data_offset - t.offset)
                fail(fmt::format("truncated file: {} data [{}, +{}) lies past the end of the file ({} bytes)", where,
                                 data_offset + t.offset, t.n_bytes, size_));
            t.data = p_ + data_offset + t.offset;
        }
        std::vector<size_t> order(f_.tensors_.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return f_.tensors_[a].offset < f_.tensors_[b].offset; });
        for (size_t i = 1; i < order.size(); ++i) {
            const auto& a = f_.tensors_[order[i - 1]];
            const auto& b = f_.tensors_[order[i]];
            if (a.offset + a.n_bytes > b.offset)
                fail(fmt::format("tensors '{}' and '{}' overlap in the data section", a.name, b.name));
        }
    }

    GgufFile& f_;
    const uint8_t* p_;
    uint64_t size_;
    uint64_t pos_ = 0;
    uint64_t n_tensors_ = 0;
    uint64_t n_kv_ = 0;
};

GgufFile GgufFile::open(const std::string& path, const GgufOpenOptions& options) {
    GgufFile f;
    f.path_ = path;
    f.file_ = std::make_unique<MappedFile>(path, options.use_mmap, options.lock);
    f.file_size_ = f.file_->size();
    GgufParser(f, f.file_->data(), f.file_->size()).parse();
    return f;
}

GgufFile GgufFile::from_memory(const void* data, size_t size, const std::string& name) {
    GgufFile f;
    f.path_ = name;
    f.file_ = std::make_unique<MappedFile>(data, size);
    f.file_size_ = size;
    GgufParser(f, f.file_->data(), f.file_->size()).parse();
    return f;
}

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

const uint8_t* GgufFile::file_data() const { return file_ ? file_->data() : nullptr; }

void GgufFile::release_pages(const void* data, size_t size) const {
    if (!file_ || !file_->is_mapped()) return;
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;  // whole pages inside only
    const auto end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

const GgufValue* GgufFile::find(std::string_view key) const {
    for (const auto& kv : kv_)
        if (kv.key == key) return &kv.value;
    return nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
    for (const auto& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name) const {
    const GgufTensorInfo* t = find_tensor(name);
    if (!t) throw Error("{}: missing tensor '{}'", path_, name);
    return *t;
}

}  // namespace pocket
