// Buffer: placement of tensors inside a device's block of memory, and byte access to it.
#include "pocket/device.hpp"
#include "pocket/error.hpp"

#include <cstring>
#include <vector>

namespace pocket {

size_t Buffer::place(Tensor& t) {
    const size_t offset = aligned_size(used_);
    place_at(t, offset);
    used_ = offset + t.nbytes();
    return offset;
}

void Buffer::place_at(Tensor& t, size_t offset) {
    if (offset % alignof(float) != 0) throw Error("buffer: offset {} of {} is misaligned", offset, tensor_desc(t));
    if (offset + t.nbytes() > size_)
        throw Error("buffer of {} bytes on {}: {} ({} bytes) does not fit at offset {}", size_, device_.name(),
                    tensor_desc(t), t.nbytes(), offset);
    t.data = static_cast<uint8_t*>(data_) + offset;
    t.buffer = this;
}

void Buffer::write(void* at, const void* src, size_t size) { std::memcpy(at, src, size); }
void Buffer::read(const void* at, void* dst, size_t size) const { std::memcpy(dst, at, size); }
void Buffer::fill(void* at, uint8_t value, size_t size) { std::memset(at, value, size); }

void copy_tensor(const Tensor& src, Tensor& dst) {
    const size_t n = src.nbytes();
    if (dst.nbytes() != n) throw Error("copy: {} and {} differ in size", tensor_desc(src), tensor_desc(dst));
    const Buffer* from = src.base()->buffer;
    Buffer* to = dst.base()->buffer;
    if (from && !from->plain_layout())
        throw Error("copy: {} is held in {}'s own layout and cannot be copied", tensor_desc(src), from->device().name());
    const bool from_host = !from || from->device().is_host();
    const bool to_host = !to || to->device().is_host();
    if (to_host && from_host) std::memcpy(dst.data, src.data, n);
    else if (from_host) to->write(dst.data, src.data, n);
    else if (to_host) from->read(src.data, dst.data, n);
    else {  // device to device: through host memory
        std::vector<uint8_t> staging(n);
        from->read(src.data, staging.data(), n);
        to->write(dst.data, staging.data(), n);
    }
}

std::string_view Backend::name() const { return device().name(); }
bool Backend::is_host() const { return device().is_host(); }
std::unique_ptr<Buffer> Backend::alloc_buffer(size_t bytes) { return device().alloc_buffer(bytes); }

}  // namespace pocket
