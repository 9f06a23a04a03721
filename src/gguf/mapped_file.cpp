#include "gguf/mapped_file.hpp"

#include "pocket/error.hpp"

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pocket {
namespace {

struct Fd {
    int fd;
    ~Fd() { if (fd >= 0) ::close(fd); }
};

}  // namespace

MappedFile::MappedFile(const std::string& path, bool use_mmap, bool lock) {
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throw Error("{}: cannot open: {}", path, std::strerror(errno));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) throw Error("{}: cannot stat: {}", path, std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw Error("{}: is a directory, not a GGUF file", path);
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ == 0) {
        static const uint8_t empty = 0;
        data_ = &empty;
        return;
    }
    if (use_mmap) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, f.fd, 0);
        if (p == MAP_FAILED) throw Error("{}: cannot mmap: {}", path, std::strerror(errno));
        // Weights are read front to back during a forward pass; tell the kernel so.
        ::madvise(p, size_, MADV_WILLNEED);
        data_ = static_cast<const uint8_t*>(p);
        mapped_ = true;
    } else {
        // 64-byte alignment: the data section is aligned relative to the file start, so
        // the in-memory copy must keep the alignment a map would have had.
        const uint64_t rounded = (size_ + 63) / 64 * 64;
        heap_ = std::aligned_alloc(64, rounded);
        if (!heap_) throw Error("{}: cannot allocate {} bytes to read the file", path, size_);
        uint8_t* dst = static_cast<uint8_t*>(heap_);
        uint64_t done = 0;
        while (done < size_) {
            const ssize_t n = ::pread(f.fd, dst + done, size_ - done, static_cast<off_t>(done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                std::free(heap_);
                heap_ = nullptr;
                throw Error("{}: read failed at byte {}: {}", path, done, n < 0 ? std::strerror(errno) : "unexpected end of file");
            }
            done += static_cast<uint64_t>(n);
        }
        data_ = dst;
    }
    if (lock) {
        if (::mlock(data_, size_) == 0) locked_ = true;
        else spdlog::warn("{}: mlock failed ({}); continuing unlocked", path, std::strerror(errno));
    }
}

MappedFile::MappedFile(const void* data, size_t size) : size_(size) {
    heap_ = std::aligned_alloc(64, (size + 64) / 64 * 64);
    if (!heap_) throw Error("cannot allocate {} bytes", size);
    if (size) std::memcpy(heap_, data, size);
    data_ = static_cast<const uint8_t*>(heap_);
}

MappedFile::~MappedFile() {
    if (locked_) ::munlock(data_, size_);
    if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
    std::free(heap_);
}

}  // namespace pocket
