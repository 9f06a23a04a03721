#pragma once
// The KV cache: per layer, K [head_dim_k * n_head_kv, n_ctx] and V [head_dim_v * n_head_kv,
// n_ctx], in one buffer per device, each layer on the device the placement gives it. The
// Context decides which cell holds which token: with one sequence cell c holds position c (a
// context shift moves rows down with graph copies, so that it works wherever the cache is,
// and re-rotates the keys, so that this always holds); with several, sequence s's position p
// is in cell s * (its cells) + p.
#include "pocket/backend.hpp"
#include "pocket/model.hpp"

#include <memory>
#include <vector>

namespace pocket {

class KvCache {
public:
    KvCache(const Placement& placement, const HParams& hp, uint32_t n_ctx, GgmlType type_k, GgmlType type_v);

    Tensor& k(uint32_t layer) { return k_[layer]; }
    Tensor& v(uint32_t layer) { return v_[layer]; }
    uint32_t n_layer() const { return static_cast<uint32_t>(k_.size()); }
    uint32_t n_ctx() const { return n_ctx_; }  // cells
    GgmlType type_k() const { return k_.front().type; }
    size_t bytes() const;                          // on every device
    size_t bytes_on(size_t device_index) const;    // on placement.devices[device_index]

private:
    uint32_t n_ctx_;
    std::vector<std::unique_ptr<Buffer>> buffers_;  // per device (null where it holds no layer)
    std::vector<Tensor> k_, v_;
};

}  // namespace pocket
