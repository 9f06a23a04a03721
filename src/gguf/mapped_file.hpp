#pragma once
// A whole file in memory, read-only: mmapped (MAP_PRIVATE) or, for --no-mmap, read into
// an aligned heap buffer. Either way callers see one contiguous byte range.
#include <cstddef>
#include <cstdint>
#include <string>

namespace pocket {

class MappedFile {
public:
    MappedFile(const std::string& path, bool use_mmap, bool lock);
    MappedFile(const void* data, size_t size);  // an aligned heap copy
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    uint64_t size() const { return size_; }
    bool is_mapped() const { return mapped_; }

private:
    const uint8_t* data_ = nullptr;
    uint64_t size_ = 0;
    bool mapped_ = false;
    bool locked_ = false;
    void* heap_ = nullptr;
};

}  // namespace pocket
