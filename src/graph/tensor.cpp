// Tensor geometry and byte access.
#include "pocket/tensor.hpp"

#include "pocket/backend.hpp"
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace pocket {

std::string_view op_name(Op op) {
    switch (op) {
        case Op::none: return "none";
        case Op::view: return "view";
        case Op::reshape: return "reshape";
        case Op::permute: return "permute";
        case Op::transpose: return "transpose";
        case Op::get_rows: return "get_rows";
        case Op::add: return "add";
        case Op::mul: return "mul";
        case Op::scale: return "scale";
        case Op::rms_norm: return "rms_norm";
        case Op::norm: return "norm";
        case Op::silu: return "silu";
        case Op::gelu: return "gelu";
        case Op::tanh: return "tanh";
        case Op::swiglu: return "swiglu";
        case Op::geglu: return "geglu";
        case Op::soft_max: return "soft_max";
        case Op::mul_mat: return "mul_mat";
        case Op::mul_mat_id: return "mul_mat_id";
        case Op::top_k: return "top_k";
        case Op::rope: return "rope";
        case Op::rope_shift: return "rope_shift";
        case Op::cont: return "cont";
        case Op::cpy: return "cpy";
        case Op::set_rows: return "set_rows";
        case Op::concat: return "concat";
        case Op::flash_attn: return "flash_attn";
    }
    return "?";
}

size_t Tensor::row_bytes() const {
    const auto& ti = type_info();
    return static_cast<size_t>(ne[0] / ti.block_size) * ti.block_bytes;
}

size_t Tensor::nbytes() const {
    for (int i = 0; i < kMaxDims; ++i)
        if (ne[i] <= 0) return 0;
    // From the first element to the end of the last one. Unquantized elements may have any
    // stride (a transposed view); quantized rows are always packed blocks.
    const auto& ti = type_info();
    size_t bytes = ti.block_size == 1 ? ti.block_bytes + static_cast<size_t>(ne[0] - 1) * nb[0] : row_bytes();
    for (int i = 1; i < kMaxDims; ++i) bytes += static_cast<size_t>(ne[i] - 1) * nb[i];
    return bytes;
}

bool Tensor::is_contiguous() const {
    const auto& ti = type_info();
    if (nb[0] != ti.block_bytes) return false;
    size_t expect = row_bytes();
    for (int i = 1; i < kMaxDims; ++i) {
        // A dim of one element has no steps: its stride does not matter.
        if (ne[i] != 1 && nb[i] != expect) return false;
        expect *= static_cast<size_t>(ne[i]);
    }
    return true;
}

bool Tensor::is_quantized() const { return type_info().quantized; }

void Tensor::set_name(std::string_view n) {
    const size_t len = std::min(n.size(), sizeof(name) - 1);
    if (len) std::memcpy(name, n.data(), len);  // an empty view may have a null data()
    name[len] = '\0';
}

Tensor make_tensor(GgmlType type, std::array<int64_t, kMaxDims> ne, void* data, std::string_view name) {
    const GgmlTypeInfo* ti = ggml_type_info(static_cast<uint32_t>(type));
    if (!ti) throw Error("tensor '{}': unknown type id {}", name, static_cast<uint32_t>(type));
    for (int i = 0; i < kMaxDims; ++i)
        if (ne[i] < 0) throw Error("tensor '{}': negative dimension {}", name, ne[i]);
    if (ne[0] % ti->block_size != 0)
        throw Error("tensor '{}': row of {} elements is not a multiple of {}'s block size {}", name, ne[0],
                    ti->name, ti->block_size);
    Tensor t;
    t.type = type;
    t.ne = ne;
    t.nb[0] = ti->block_bytes;
    t.nb[1] = static_cast<size_t>(ne[0] / ti->block_size) * ti->block_bytes;
    t.nb[2] = t.nb[1] * static_cast<size_t>(ne[1]);
    t.nb[3] = t.nb[2] * static_cast<size_t>(ne[2]);
    t.data = data;
    t.set_name(name);
    return t;
}

Tensor tensor_from_gguf(const GgufTensorInfo& info) {
    // Weights are only read; the const_cast lets them share the Tensor type with the KV cache.
    return make_tensor(info.type, info.ne, const_cast<uint8_t*>(info.data), info.name);
}

void tensor_set(Tensor& t, const void* src, size_t size, size_t offset) {
    if (!t.data) throw Error("tensor_set: '{}' has no memory yet (allocate the graph first)", t.get_name());
    if (offset + size > t.nbytes())
        throw Error("tensor_set: {} bytes at {} overflow '{}' ({} bytes)", size, offset, t.get_name(), t.nbytes());
    if (t.buffer)
        t.buffer->write(static_cast<uint8_t*>(t.data) + offset, src, size);
    else
        std::memcpy(static_cast<uint8_t*>(t.data) + offset, src, size);
}

void tensor_get(const Tensor& t, void* dst, size_t size, size_t offset) {
    if (!t.data) throw Error("tensor_get: '{}' has no memory yet (allocate the graph first)", t.get_name());
    if (offset + size > t.nbytes())
        throw Error("tensor_get: {} bytes at {} overflow '{}' ({} bytes)", size, offset, t.get_name(), t.nbytes());
    if (t.buffer)
        t.buffer->read(static_cast<const uint8_t*>(t.data) + offset, dst, size);
    else
        std::memcpy(dst, static_cast<const uint8_t*>(t.data) + offset, size);
}

std::string tensor_desc(const Tensor& t) {
    std::string s = fmt::format("'{}' {}[{}", t.get_name(), t.type_info().name, t.ne[0]);
    int last = kMaxDims - 1;
    while (last > 0 && t.ne[last] == 1) --last;
    for (int i = 1; i <= last; ++i) s += fmt::format(",{}", t.ne[i]);
    return s + "]";
}

}  // namespace pocket
