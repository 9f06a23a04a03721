#pragma once
// pocket::Graph: builds a forward pass as a DAG of op nodes, ggml-style:
//
//     pocket::Graph g;
//     pocket::Tensor* ids = g.input("ids", GgmlType::I32, {n_tokens});
//     pocket::Tensor* x   = g.get_rows(&w.tok_embd, ids);            // [n_embd, n_tokens]
//     for (int il = 0; il < n_layer; ++il) {
//         g.set_layer(il);                                           // tags the nodes below
//         pocket::Tensor* h = g.mul(g.rms_norm(x, eps), &w.layers[il].attn_norm);
//         ...
//     }
//     g.set_layer(n_layer);
//     pocket::Tensor* logits = g.mul_mat(&w.output, g.rms_norm(x, eps));
//     g.mark_output(logits);
//
// Nodes run in creation order, which is a topological order by construction (an operand
// always exists before its user). That also orders side effects: a write into a persistent
// tensor (cpy / set_rows into the KV cache) runs before any node created after it that reads
// the same memory. Nodes whose result nothing uses are dropped unless they are outputs or
// write into memory outside the arena (persistent tensors).
//
// Shapes follow ggml: ne[0] is the row length. Element-wise ops take f32 tensors of any
// strides and return contiguous f32 tensors. `b` operands broadcast: each b.ne[i] must divide
// a.ne[i]. Errors in shapes or types throw pocket::Error naming the op and the tensors.
//
// Attention with a persistent KV cache (k_cache f16 [n_embd_k, n_ctx], see backend.hpp),
// without rebuilding the graph per token: the cache rows to write (n_past + t) and the mask
// (0 where query t may see cell c, -inf elsewhere) are inputs.
//
//     Tensor* pos  = g.input("pos", GgmlType::I32, {n_tokens});
//     Tensor* rows = g.input("kv_rows", GgmlType::I32, {n_tokens});
//     Tensor* mask = g.input("kq_mask", GgmlType::F32, {n_kv, n_tokens});   // n_kv <= n_ctx
//     Tensor* q = g.rope(g.reshape(g.mul_mat(wq, h), {hd, n_head, n_tokens}), pos, rp);
//     Tensor* k = g.rope(g.reshape(g.mul_mat(wk, h), {hd, n_head_kv, n_tokens}), pos, rp);
//     Tensor* v = g.mul_mat(wv, h);                                         // [hd*n_head_kv, n_tokens]
//     g.set_rows(&k_cache, g.reshape(k, {hd * n_head_kv, n_tokens}), rows);
//     g.set_rows(&v_cache, v, rows);
//     Tensor* kv = g.view_3d(&k_cache, hd, n_head_kv, n_kv, k_cache.nb[0] * hd, k_cache.nb[1], 0);
//     Tensor* vv = g.view_3d(&v_cache, hd, n_head_kv, n_kv, v_cache.nb[0] * hd, v_cache.nb[1], 0);
//     Tensor* a = g.flash_attn(q, kv, vv, mask, {.scale = 1.0f / std::sqrt(float(hd))});
//     x = g.add(x, g.mul_mat(wo, g.reshape(a, {hd * n_head, n_tokens})));
//
// (With a graph rebuilt per step, `mask` may be null and AttnParams::causal = 1 over a view
// of exactly n_past + n_tokens cells.) Blocks of cells masked -inf for every query are skipped,
// so n_kv may be the whole context at small cost; rounding n_kv up to a multiple of 256 and
// rebuilding when it grows keeps decode cheap for long contexts.
//
// A graph is built once per batch size and reused: everything that changes from one call to
// the next (token ids, positions, KV write rows, masks) is an input tensor filled before
// each compute. The Graph owns the tensors it creates (stable addresses); leaves created
// elsewhere (weights, the KV cache) are referenced, not copied, and must outlive it.
#include "pocket/tensor.hpp"

#include <deque>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

namespace pocket {

class Graph {
public:
    Graph() = default;
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    // ---- leaves -------------------------------------------------------------------------
    // A graph input: memory in the arena (valid after allocation), filled by the caller with
    // tensor_set (or directly through ->data on a host backend) before each compute.
    Tensor* input(std::string_view name, GgmlType type, std::array<int64_t, kMaxDims> ne);
    // Outputs are kept alive to the end of compute and never share memory; read them with
    // tensor_get (or ->data on a host backend) after compute.
    void mark_output(Tensor* t);

    // Layer tag for the nodes created from now on (the Scheduler splits by it; -ngl).
    void set_layer(int layer) { layer_ = layer; }
    int layer() const { return layer_; }

    // ---- views (no copy; the result aliases the source's memory) -------------------------
    // Arbitrary view: ne, byte strides nb[1..3] (nb[0] is the type's), byte offset.
    Tensor* view(Tensor* a, std::array<int64_t, kMaxDims> ne, std::array<size_t, 3> nb123, size_t offset);
    Tensor* view_1d(Tensor* a, int64_t ne0, size_t offset);
    Tensor* view_2d(Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
    Tensor* view_3d(Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset);
    // Same elements, new shape; `a` must be contiguous.
    Tensor* reshape(Tensor* a, std::array<int64_t, kMaxDims> ne);
    // Result dim axes[i] is a's dim i moved to position axes[i] (ggml_permute's convention).
    Tensor* permute(Tensor* a, int ax0, int ax1, int ax2, int ax3);
    Tensor* transpose(Tensor* a);  // swaps dims 0 and 1

    // ---- element-wise and row ops ---------------------------------------------------------
    // Rows of `a` (any type: dequantized) selected by `ids` (I32 [n] or [n, m]): f32 [a.ne0, n, m].
    Tensor* get_rows(Tensor* a, Tensor* ids);
    Tensor* add(Tensor* a, Tensor* b);             // a + b, b broadcast
    Tensor* mul(Tensor* a, Tensor* b);             // a * b, b broadcast
    Tensor* scale(Tensor* a, float s);
    Tensor* rms_norm(Tensor* a, float eps);        // x / sqrt(mean(x^2) + eps), per row
    Tensor* norm(Tensor* a, float eps);            // (x - mean) / sqrt(var + eps), per row
    Tensor* silu(Tensor* a);                       // x * sigmoid(x)
    Tensor* gelu(Tensor* a);                       // tanh approximation, as ggml_gelu
    Tensor* tanh(Tensor* a);                       // soft-capping: scale(tanh(scale(x, 1/cap)), cap)
    Tensor* swiglu(Tensor* gate, Tensor* up);      // silu(gate) * up
    Tensor* geglu(Tensor* gate, Tensor* up);       // gelu(gate) * up
    // Softmax over ne[0]; mask (optional, f32 [ne0, >=ne1], broadcast over dims 2, 3) is added
    // after scaling; see SoftMaxParams.
    Tensor* soft_max(Tensor* a, Tensor* mask = nullptr, const SoftMaxParams& p = {});

    // ---- linear algebra -------------------------------------------------------------------
    // w [k, n] (any type with kernels: f32, f16, q4_0 ...) x [k, m, b2, b3] f32 -> f32 [n, m, b2, b3].
    // Computes out[j][i] = dot(w row i, x row j); w broadcasts over dims 2, 3.
    Tensor* mul_mat(Tensor* w, Tensor* x);

    // ---- mixture of experts ----------------------------------------------------------------
    // Indices of the k largest values of each row of a (f32 [n, ...], any strides), largest
    // first, equal values by lowest index: I32 [k, a.ne1, a.ne2, a.ne3].
    Tensor* top_k(Tensor* a, int64_t k);
    // The chosen experts' products: w [k, n, n_expert] (a stack of mul_mat weights),
    // x f32 [k, 1 or n_used, n_tokens] (contiguous rows), ids I32 [n_used, n_tokens] (the experts
    // of each token) -> f32 [n, n_used, n_tokens] with out[:, i, t] = w[:, :, ids[i, t]] x[:, i or 0, t],
    // each element bit for bit what mul_mat(w's expert, x) gives.
    Tensor* mul_mat_id(Tensor* w, Tensor* x, Tensor* ids);

    // ---- rope ----------------------------------------------------------------------------
    // a f32 [head_dim, n_head, n_tokens], pos I32 [n_tokens]; freq_factors f32 [n_rot/2] or null.
    Tensor* rope(Tensor* a, Tensor* pos, const RopeParams& p, Tensor* freq_factors = nullptr);
    // In place on cached keys (f32 or f16 [head_dim, n_head_kv, n_kv], e.g. a view of the cache):
    // rotates each cell further by delta I32 [n_kv] positions (context shift). Returns `k`'s alias.
    Tensor* rope_shift(Tensor* k, Tensor* delta, const RopeParams& p, Tensor* freq_factors = nullptr);

    // ---- layout and type ----------------------------------------------------------------------
    Tensor* cont(Tensor* a);                       // contiguous copy (same type, f32 or f16) of any-stride a
    // Writes src into dst converting the type (each f32, f16 or q8_0; same row length and row
    // count; dst usually a view of a persistent tensor). Returns an alias of dst that orders
    // later readers after the write.
    Tensor* cpy(Tensor* src, Tensor* dst);
    // dst[.., idx[r], ..] = src row r (converted to dst's type): writes the KV cache at rows
    // given by an input tensor, so the graph needs no rebuild when n_past changes.
    // dst [ne0, n_rows] (f32/f16/q8_0), src f32 [ne0, n], idx I32 [n]. Returns dst's alias.
    Tensor* set_rows(Tensor* dst, Tensor* src, Tensor* idx);
    Tensor* concat(Tensor* a, Tensor* b, int dim); // f32 result; other dims must match

    // ---- attention ------------------------------------------------------------------------
    // softmax(q k^T * scale (+ softcap) + mask) v without materialising the score matrix:
    // online softmax over blocks of kv positions.
    //   q    f32 [d, n_head, n_q]           (any strides)
    //   k    f32/f16/q8_0 [d, n_head_kv, n_kv]
    //   v    f32/f16/q8_0 [dv, n_head_kv, n_kv]
    //   mask f32 [n_kv, >= n_q] or null: added to the scores; -inf cells are skipped
    //   p.window > 0 narrows each query to the window of cells ending at its last visible one
    // n_head must be a multiple of n_head_kv (grouped-query: head h reads kv head h / (n_head/n_head_kv)).
    // Result f32 [dv, n_head, n_q], contiguous: reshape to [dv * n_head, n_q] for the output projection.
    Tensor* flash_attn(Tensor* q, Tensor* k, Tensor* v, Tensor* mask, const AttnParams& p);

    // ---- the built graph ------------------------------------------------------------------
    // Every tensor created here, leaves included, in creation order.
    std::span<Tensor* const> tensors() const { return all_; }
    // The nodes that will run, in order (call after building; cached until the graph changes).
    std::span<Tensor* const> nodes();
    size_t n_tensors() const { return all_.size(); }

    // Internal: adds a node (used by the op builders and the scheduler).
    Tensor* new_tensor(GgmlType type, std::array<int64_t, kMaxDims> ne, Op op,
                       std::initializer_list<Tensor*> srcs);
    Tensor* new_view(Tensor* a, Op op, std::array<int64_t, kMaxDims> ne, std::array<size_t, kMaxDims> nb, size_t offset);

private:
    std::deque<Tensor> storage_;
    std::vector<Tensor*> all_;
    std::vector<Tensor*> nodes_;
    bool nodes_valid_ = false;
    int layer_ = -1;
};

}  // namespace pocket
