#include "model/kv_cache.hpp"

#include "pocket/error.hpp"

#include <cstring>

namespace pocket {

KvCache::KvCache(Backend& backend, const HParams& hp, uint32_t n_ctx, GgmlType type_k, GgmlType type_v) : n_ctx_(n_ctx) {
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
    size_t total = 0;
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        k_.push_back(make_tensor(type_k, {hp.n_embd_k_gqa(), n_ctx, 1, 1}, nullptr, "cache_k_l" + std::to_string(l)));
        v_.push_back(make_tensor(type_v, {hp.n_embd_v_gqa(), n_ctx, 1, 1}, nullptr, "cache_v_l" + std::to_string(l)));
        total += k_.back().nbytes() + v_.back().nbytes() + 2 * Buffer::kAlign;
    }
    buffer_ = backend.alloc_buffer(total);
    for (uint32_t l = 0; l < hp.n_layer; ++l) {
        buffer_->place(k_[l]);
        buffer_->place(v_[l]);
    }
    buffer_->clear(0);
}

void KvCache::move_cells(uint32_t from, uint32_t to, uint32_t n) {
    if (!buffer_->backend().is_host()) throw Error("context shift on a non-host KV cache is not supported yet");
    for (auto* set : {&k_, &v_})
        for (auto& t : *set) {
            auto* base = static_cast<uint8_t*>(t.data);
            std::memmove(base + to * t.nb[1], base + from * t.nb[1], n * t.nb[1]);
        }
}

}  // namespace pocket
