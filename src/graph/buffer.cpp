// Buffer: placement of tensors inside a backend's block of memory.
#include "pocket/backend.hpp"
#include "pocket/error.hpp"

namespace pocket {

size_t Buffer::place(Tensor& t) {
    const size_t offset = (used_ + kAlign - 1) / kAlign * kAlign;
    place_at(t, offset);
    used_ = offset + t.nbytes();
    return offset;
}

void Buffer::place_at(Tensor& t, size_t offset) {
    if (offset % alignof(float) != 0) throw Error("buffer: offset {} of {} is misaligned", offset, tensor_desc(t));
    if (offset + t.nbytes() > size_)
        throw Error("buffer of {} bytes on {}: {} ({} bytes) does not fit at offset {}", size_, backend_.name(),
                    tensor_desc(t), t.nbytes(), offset);
    t.data = static_cast<uint8_t*>(data_) + offset;
    t.buffer = this;
}

void Buffer::clear(uint8_t value) { backend_.memset(data_, value, size_); }

}  // namespace pocket
