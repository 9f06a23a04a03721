#pragma once
// The KV cache: per layer, K [head_dim_k * n_head_kv, n_ctx] and V [head_dim_v * n_head_kv,
// n_ctx] in one backend buffer. Cell c holds the token at position c: a context shift moves
// rows down and re-rotates the keys, so that invariant always holds.
#include "pocket/backend.hpp"
#include "pocket/model.hpp"

#include <memory>
#include <vector>

namespace pocket {

class KvCache {
public:
    KvCache(Backend& backend, const HParams& hp, uint32_t n_ctx, GgmlType type_k, GgmlType type_v);

    Tensor& k(uint32_t layer) { return k_[layer]; }
    Tensor& v(uint32_t layer) { return v_[layer]; }
    uint32_t n_ctx() const { return n_ctx_; }
    GgmlType type_k() const { return k_.front().type; }
    size_t bytes() const { return buffer_->size(); }

    // Moves cells [from, from + n) to [to, to + n) in every layer (host backends).
    void move_cells(uint32_t from, uint32_t to, uint32_t n);

private:
    uint32_t n_ctx_;
    std::unique_ptr<Buffer> buffer_;
    std::vector<Tensor> k_, v_;
};

}  // namespace pocket
