#include "model/kv_cache.hpp"

#include "pocket/error.hpp"

namespace pocket {

KvCache::KvCache(const Placement& placement, const HParams& hp, uint32_t n_ctx, GgmlType type_k, GgmlType type_v)
    : n_ctx_(n_ctx) {
    for (GgmlType t : {type_k, type_v})
        if (t != GgmlType::F32 && t != GgmlType::F16 && t != GgmlType::Q8_0)
            throw Error("KV cache type {} is not supported (f32, f16 or q8_0)", ggml_type_info(t).name);
    auto check_rows = [&](GgmlType t, uint32_t head_dim, const char* which) {
        if (head_dim % ggml_type_info(t).block_size != 0)
            throw Error("a {} KV cache needs a head size that is a multiple of {}, and this model's {} head size is {}",
                        ggml_type_info(t).name, ggml_type_info(t).block_size, which, head_dim);
    };
    check_rows(type_k, hp.head_dim_k, "key");
    check_rows(type_v, hp.head_dim_v, "value");
    std::vector<size_t> total(placement.devices.size(), 0);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        k_.push_back(make_tensor(type_k, {hp.n_embd_k_gqa(), n_ctx, 1, 1}, nullptr, "cache_k_l" + std::to_string(l)));
        v_.push_back(make_tensor(type_v, {hp.n_embd_v_gqa(), n_ctx, 1, 1}, nullptr, "cache_v_l" + std::to_string(l)));
        total[static_cast<size_t>(placement.device_index(static_cast<int>(l)))] +=
            k_.back().nbytes() + v_.back().nbytes() + 2 * Buffer::kAlign;
    }
    buffers_.resize(total.size());
    for (size_t d = 0; d < total.size(); ++d)
        if (total[d]) buffers_[d] = placement.devices[d]->alloc_buffer(total[d]);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        Buffer& b = *buffers_[static_cast<size_t>(placement.device_index(static_cast<int>(l)))];
        b.place(k_[l]);
        b.place(v_[l]);
    }
    for (auto& b : buffers_)
        if (b) b->clear(0);
}

size_t KvCache::bytes() const {
    size_t n = 0;
    for (const auto& b : buffers_)
        if (b) n += b->size();
    return n;
}

size_t KvCache::bytes_on(size_t device_index) const {
    return device_index < buffers_.size() && buffers_[device_index] ? buffers_[device_index]->size() : 0;
}

}  // namespace pocket
