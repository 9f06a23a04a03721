#pragma once
// What an architecture's build() gets: the hyper-parameters, the KV cache, the batch size,
// and the graph inputs the Context fills before each compute.
#include "pocket/graph.hpp"
#include "pocket/model.hpp"

namespace pocket {

class KvCache;

struct ForwardInputs {
    const HParams& hp;
    KvCache& cache;
    int64_t n_tokens;   // tokens in this batch
    int64_t n_out;      // tokens whose logits are wanted
    int64_t n_kv;       // cache cells attention looks at (>= n_past + n_tokens)
    Tensor* ids;        // I32 [n_tokens]: token ids
    Tensor* pos;        // I32 [n_tokens]: positions
    Tensor* kv_rows;    // I32 [n_tokens]: the cache cells the batch writes
    Tensor* kq_mask;    // F32 [n_kv, n_tokens]: 0 where a token may attend to a cell, -inf elsewhere
    Tensor* out_rows;   // I32 [n_out]: the batch rows whose logits are computed
    bool flash_attn = true;  // fused attention, or scores, soft_max and values apart (-fa off)
};

}  // namespace pocket
