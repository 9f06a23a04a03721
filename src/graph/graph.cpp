// Graph builders: shape and type checks, then one node per op.
#include "pocket/graph.hpp"

#include "pocket/error.hpp"

#include <algorithm>

namespace pocket {

namespace {

void require(bool ok, Op op, const Tensor* a, const Tensor* b, std::string_view what) {
    if (ok) return;
    std::string operands = a ? tensor_desc(*a) : std::string("?");
    if (b) operands += ", " + tensor_desc(*b);
    throw Error("graph: {}({}): {}", op_name(op), operands, what);
}

bool same_shape(const Tensor* a, const Tensor* b) { return a->ne == b->ne; }

bool broadcasts_to(const Tensor* b, const Tensor* a) {
    for (int i = 0; i < kMaxDims; ++i)
        if (b->ne[i] == 0 || a->ne[i] % b->ne[i] != 0) return false;
    return true;
}

bool is_float(const Tensor* t) { return t->type == GgmlType::F32; }

}  // namespace

Tensor* Graph::new_tensor(GgmlType type, std::array<int64_t, kMaxDims> ne, Op op, std::initializer_list<Tensor*> srcs) {
    storage_.push_back(make_tensor(type, ne));
    Tensor* t = &storage_.back();
    t->op = op;
    int i = 0;
    for (Tensor* s : srcs) t->src[i++] = s;
    t->layer = layer_;
    t->index = static_cast<int32_t>(all_.size());
    all_.push_back(t);
    nodes_valid_ = false;
    return t;
}

Tensor* Graph::new_view(Tensor* a, Op op, std::array<int64_t, kMaxDims> ne, std::array<size_t, kMaxDims> nb,
                        size_t offset) {
    // Start from a one-block shape valid for any type, then take the view's geometry.
    Tensor* t = new_tensor(a->type, {a->type_info().block_size, 1, 1, 1}, op, {a});
    t->ne = ne;
    t->nb = nb;
    t->view_src = a;
    t->view_offs = offset;
    t->buffer = a->buffer;
    if (a->data) t->data = static_cast<uint8_t*>(a->data) + offset;
    bool fits = offset + t->nbytes() <= a->nbytes() || t->nelements() == 0;
    require(fits, op, a, nullptr, fmt::format("view of {} bytes at offset {} exceeds the source", t->nbytes(), offset));
    return t;
}

Tensor* Graph::input(std::string_view name, GgmlType type, std::array<int64_t, kMaxDims> ne) {
    Tensor* t = new_tensor(type, ne, Op::none, {});
    t->flags |= kTensorInput;
    t->set_name(name);
    return t;
}

void Graph::mark_output(Tensor* t) {
    t->flags |= kTensorOutput;
    nodes_valid_ = false;
}

// ---- views ------------------------------------------------------------------------------

Tensor* Graph::view(Tensor* a, std::array<int64_t, kMaxDims> ne, std::array<size_t, 3> nb123, size_t offset) {
    return new_view(a, Op::view, ne, {a->type_info().block_bytes, nb123[0], nb123[1], nb123[2]}, offset);
}

Tensor* Graph::view_1d(Tensor* a, int64_t ne0, size_t offset) {
    Tensor t = make_tensor(a->type, {ne0, 1, 1, 1});
    return new_view(a, Op::view, t.ne, t.nb, offset);
}

Tensor* Graph::view_2d(Tensor* a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    return view(a, {ne0, ne1, 1, 1}, {nb1, nb1 * ne1, nb1 * ne1}, offset);
}

Tensor* Graph::view_3d(Tensor* a, int64_t ne0, int64_t ne1, int64_t ne2, size_t nb1, size_t nb2, size_t offset) {
    return view(a, {ne0, ne1, ne2, 1}, {nb1, nb2, nb2 * ne2}, offset);
}

Tensor* Graph::reshape(Tensor* a, std::array<int64_t, kMaxDims> ne) {
    require(a->is_contiguous(), Op::reshape, a, nullptr, "source must be contiguous");
    Tensor t = make_tensor(a->type, ne);
    require(t.nelements() == a->nelements(), Op::reshape, a, nullptr,
            fmt::format("{} elements cannot take {} elements' shape", a->nelements(), t.nelements()));
    return new_view(a, Op::reshape, t.ne, t.nb, 0);
}

Tensor* Graph::permute(Tensor* a, int ax0, int ax1, int ax2, int ax3) {
    const int axes[4] = {ax0, ax1, ax2, ax3};
    bool seen[4] = {};
    for (int ax : axes) {
        require(ax >= 0 && ax < 4 && !seen[ax], Op::permute, a, nullptr, "axes must be a permutation of 0..3");
        seen[ax] = true;
    }
    std::array<int64_t, kMaxDims> ne{};
    std::array<size_t, kMaxDims> nb{};
    for (int i = 0; i < 4; ++i) {
        ne[axes[i]] = a->ne[i];
        nb[axes[i]] = a->nb[i];
    }
    return new_view(a, Op::permute, ne, nb, 0);
}

Tensor* Graph::transpose(Tensor* a) {
    Tensor* t = permute(a, 1, 0, 2, 3);
    t->op = Op::transpose;
    return t;
}

// ---- element-wise and row ops ---------------------------------------------------------------

Tensor* Graph::get_rows(Tensor* a, Tensor* ids) {
    require(ids->type == GgmlType::I32, Op::get_rows, a, ids, "ids must be i32");
    require(a->ne[3] == 1 && ids->ne[3] == 1, Op::get_rows, a, ids, "at most 3 dims");
    require(a->ne[2] == 1 || a->ne[2] == ids->ne[1], Op::get_rows, a, ids, "a.ne[2] must be 1 or ids.ne[1]");
    return new_tensor(GgmlType::F32, {a->ne[0], ids->ne[0], ids->ne[1], ids->ne[2]}, Op::get_rows, {a, ids});
}

Tensor* Graph::add(Tensor* a, Tensor* b) {
    require(is_float(a) && is_float(b), Op::add, a, b, "operands must be f32");
    require(broadcasts_to(b, a), Op::add, a, b, "b does not broadcast to a");
    return new_tensor(GgmlType::F32, a->ne, Op::add, {a, b});
}

Tensor* Graph::mul(Tensor* a, Tensor* b) {
    require(is_float(a) && is_float(b), Op::mul, a, b, "operands must be f32");
    require(broadcasts_to(b, a), Op::mul, a, b, "b does not broadcast to a");
    return new_tensor(GgmlType::F32, a->ne, Op::mul, {a, b});
}

Tensor* Graph::scale(Tensor* a, float s) {
    require(is_float(a), Op::scale, a, nullptr, "operand must be f32");
    Tensor* t = new_tensor(GgmlType::F32, a->ne, Op::scale, {a});
    t->set_params(s);
    return t;
}

Tensor* Graph::rms_norm(Tensor* a, float eps) {
    require(is_float(a), Op::rms_norm, a, nullptr, "operand must be f32");
    Tensor* t = new_tensor(GgmlType::F32, a->ne, Op::rms_norm, {a});
    t->set_params(eps);
    return t;
}

Tensor* Graph::norm(Tensor* a, float eps) {
    require(is_float(a), Op::norm, a, nullptr, "operand must be f32");
    Tensor* t = new_tensor(GgmlType::F32, a->ne, Op::norm, {a});
    t->set_params(eps);
    return t;
}

Tensor* Graph::silu(Tensor* a) {
    require(is_float(a), Op::silu, a, nullptr, "operand must be f32");
    return new_tensor(GgmlType::F32, a->ne, Op::silu, {a});
}

Tensor* Graph::gelu(Tensor* a) {
    require(is_float(a), Op::gelu, a, nullptr, "operand must be f32");
    return new_tensor(GgmlType::F32, a->ne, Op::gelu, {a});
}

Tensor* Graph::tanh(Tensor* a) {
    require(is_float(a), Op::tanh, a, nullptr, "operand must be f32");
    return new_tensor(GgmlType::F32, a->ne, Op::tanh, {a});
}

Tensor* Graph::swiglu(Tensor* gate, Tensor* up) {
    require(is_float(gate) && is_float(up) && same_shape(gate, up), Op::swiglu, gate, up,
            "operands must be f32 of one shape");
    return new_tensor(GgmlType::F32, gate->ne, Op::swiglu, {gate, up});
}

Tensor* Graph::geglu(Tensor* gate, Tensor* up) {
    require(is_float(gate) && is_float(up) && same_shape(gate, up), Op::geglu, gate, up,
            "operands must be f32 of one shape");
    return new_tensor(GgmlType::F32, gate->ne, Op::geglu, {gate, up});
}

Tensor* Graph::soft_max(Tensor* a, Tensor* mask, const SoftMaxParams& p) {
    require(is_float(a), Op::soft_max, a, mask, "operand must be f32");
    if (mask)
        require(is_float(mask) && mask->ne[0] == a->ne[0] && mask->ne[1] >= a->ne[1] && mask->ne[2] == 1 &&
                    mask->ne[3] == 1,
                Op::soft_max, a, mask, "mask must be f32 [a.ne0, >= a.ne1]");
    require(p.softcap >= 0.0f && p.window >= 0, Op::soft_max, a, mask, "softcap and window must be >= 0");
    Tensor* t = new_tensor(GgmlType::F32, a->ne, Op::soft_max, {a, mask});
    t->set_params(p);
    return t;
}

// ---- linear algebra ---------------------------------------------------------------------------

Tensor* Graph::mul_mat(Tensor* w, Tensor* x) {
    require(is_float(x), Op::mul_mat, w, x, "activations must be f32");
    require(w->ne[0] == x->ne[0], Op::mul_mat, w, x, "row lengths differ");
    require(x->ne[2] % w->ne[2] == 0 && x->ne[3] % w->ne[3] == 0, Op::mul_mat, w, x,
            "w does not broadcast over x's dims 2, 3");
    require(w->nb[0] == w->type_info().block_bytes, Op::mul_mat, w, x, "weight rows must be contiguous");
    return new_tensor(GgmlType::F32, {w->ne[1], x->ne[1], x->ne[2], x->ne[3]}, Op::mul_mat, {w, x});
}

// ---- mixture of experts ---------------------------------------------------------------------

Tensor* Graph::top_k(Tensor* a, int64_t k) {
    require(is_float(a), Op::top_k, a, nullptr, "operand must be f32");
    require(k >= 1 && k <= a->ne[0], Op::top_k, a, nullptr, "k must be in [1, ne[0]]");
    Tensor* t = new_tensor(GgmlType::I32, {k, a->ne[1], a->ne[2], a->ne[3]}, Op::top_k, {a});
    return t;
}

Tensor* Graph::mul_mat_id(Tensor* w, Tensor* x, Tensor* ids) {
    require(is_float(x) && x->nb[0] == sizeof(float), Op::mul_mat_id, w, x, "activations must be f32 with contiguous rows");
    require(w->ne[0] == x->ne[0], Op::mul_mat_id, w, x, "row lengths differ");
    require(w->ne[3] == 1 && x->ne[3] == 1, Op::mul_mat_id, w, x, "at most 3 dims");
    require(w->nb[0] == w->type_info().block_bytes, Op::mul_mat_id, w, x, "weight rows must be contiguous");
    require(ids->type == GgmlType::I32 && ids->ne[2] == 1 && ids->ne[3] == 1 && ids->ne[1] == x->ne[2], Op::mul_mat_id, x, ids,
            "ids must be i32 [n_used, n_tokens]");
    require(x->ne[1] == 1 || x->ne[1] == ids->ne[0], Op::mul_mat_id, x, ids, "x.ne[1] must be 1 or n_used");
    return new_tensor(GgmlType::F32, {w->ne[1], ids->ne[0], ids->ne[1], 1}, Op::mul_mat_id, {w, x, ids});
}

// ---- rope -----------------------------------------------------------------------------------

namespace {
void check_rope(Op op, Tensor* a, Tensor* pos, const RopeParams& p, Tensor* ff) {
    require(pos->type == GgmlType::I32 && pos->nelements() == a->ne[2], op, a, pos,
            "positions must be i32 with one entry per token (a.ne[2])");
    require(a->ne[3] == 1, op, a, pos, "at most 3 dims");
    require(p.n_rot > 0 && p.n_rot % 2 == 0 && p.n_rot <= a->ne[0], op, a, pos, "n_rot must be even and <= ne[0]");
    require(p.mode == RopeMode::norm || p.mode == RopeMode::neox, op, a, pos, "unknown rope mode");
    if (ff) require(is_float(ff) && ff->nelements() >= p.n_rot / 2, op, a, ff, "freq_factors must be f32 [n_rot/2]");
}
}  // namespace

Tensor* Graph::rope(Tensor* a, Tensor* pos, const RopeParams& p, Tensor* freq_factors) {
    require(is_float(a), Op::rope, a, pos, "operand must be f32");
    check_rope(Op::rope, a, pos, p, freq_factors);
    Tensor* t = new_tensor(GgmlType::F32, a->ne, Op::rope, {a, pos, freq_factors});
    t->set_params(p);
    return t;
}

Tensor* Graph::rope_shift(Tensor* k, Tensor* delta, const RopeParams& p, Tensor* freq_factors) {
    require(k->type == GgmlType::F32 || k->type == GgmlType::F16, Op::rope_shift, k, delta, "keys must be f32 or f16");
    check_rope(Op::rope_shift, k, delta, p, freq_factors);
    require(k->nb[0] == k->type_info().block_bytes, Op::rope_shift, k, delta, "key rows must be contiguous");
    Tensor* t = new_view(k, Op::rope_shift, k->ne, k->nb, 0);
    t->src = {k, delta, freq_factors, nullptr, nullptr};
    t->set_params(p);
    return t;
}

// ---- layout and type --------------------------------------------------------------------------

Tensor* Graph::cont(Tensor* a) {
    require(a->type == GgmlType::F32 || a->type == GgmlType::F16, Op::cont, a, nullptr, "operand must be f32 or f16");
    return new_tensor(a->type, a->ne, Op::cont, {a});
}

namespace {
bool is_storable(GgmlType t) { return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::Q8_0; }
}  // namespace

Tensor* Graph::cpy(Tensor* src, Tensor* dst) {
    require(is_storable(src->type), Op::cpy, src, dst, "source must be f32, f16 or q8_0");
    require(!src->is_quantized() || src->nb[0] == src->type_info().block_bytes, Op::cpy, src, dst,
            "quantized source rows must be contiguous");
    require(is_storable(dst->type), Op::cpy, src, dst, "destination must be f32, f16 or q8_0");
    require(src->ne[0] == dst->ne[0] && src->nrows() == dst->nrows(), Op::cpy, src, dst,
            "row lengths and row counts must match");
    require(!dst->is_quantized() || dst->nb[0] == dst->type_info().block_bytes, Op::cpy, src, dst,
            "quantized destination rows must be contiguous");
    Tensor* t = new_view(dst, Op::cpy, dst->ne, dst->nb, 0);
    t->src = {src, dst, nullptr, nullptr, nullptr};
    return t;
}

Tensor* Graph::set_rows(Tensor* dst, Tensor* src, Tensor* idx) {
    require(is_float(src), Op::set_rows, dst, src, "source must be f32");
    require(is_storable(dst->type), Op::set_rows, dst, src, "destination must be f32, f16 or q8_0");
    require(dst->ne[0] == src->ne[0] && dst->ne[2] == 1 && dst->ne[3] == 1, Op::set_rows, dst, src,
            "destination must be 2-d with the source's row length");
    require(idx->type == GgmlType::I32 && idx->nelements() == src->nrows(), Op::set_rows, dst, idx,
            "idx must be i32 with one entry per source row");
    require(dst->nb[0] == dst->type_info().block_bytes, Op::set_rows, dst, src, "destination rows must be contiguous");
    Tensor* t = new_view(dst, Op::set_rows, dst->ne, dst->nb, 0);
    t->src = {dst, src, idx, nullptr, nullptr};
    return t;
}

Tensor* Graph::concat(Tensor* a, Tensor* b, int dim) {
    require(is_float(a) && is_float(b), Op::concat, a, b, "operands must be f32");
    require(dim >= 0 && dim < kMaxDims, Op::concat, a, b, "dim must be 0..3");
    auto ne = a->ne;
    for (int i = 0; i < kMaxDims; ++i)
        if (i != dim) require(a->ne[i] == b->ne[i], Op::concat, a, b, "dims other than `dim` must match");
    ne[dim] += b->ne[dim];
    Tensor* t = new_tensor(GgmlType::F32, ne, Op::concat, {a, b});
    t->set_params(static_cast<int32_t>(dim));
    return t;
}

// ---- attention ----------------------------------------------------------------------------

Tensor* Graph::flash_attn(Tensor* q, Tensor* k, Tensor* v, Tensor* mask, const AttnParams& p) {
    require(is_float(q), Op::flash_attn, q, k, "q must be f32");
    require(is_storable(k->type) && is_storable(v->type), Op::flash_attn, k, v, "k and v must be f32, f16 or q8_0");
    require(q->ne[3] == 1 && k->ne[3] == 1 && v->ne[3] == 1, Op::flash_attn, q, k, "at most 3 dims");
    require(q->ne[0] == k->ne[0], Op::flash_attn, q, k, "head sizes of q and k differ");
    require(k->ne[1] == v->ne[1] && k->ne[2] == v->ne[2], Op::flash_attn, k, v, "k and v differ in heads or cells");
    require(k->ne[1] > 0 && q->ne[1] % k->ne[1] == 0, Op::flash_attn, q, k, "n_head must be a multiple of n_head_kv");
    require(k->nb[0] == k->type_info().block_bytes && v->nb[0] == v->type_info().block_bytes, Op::flash_attn, k, v,
            "k and v rows must be contiguous");
    if (mask)
        require(is_float(mask) && mask->ne[0] == k->ne[2] && mask->ne[1] >= q->ne[2] && mask->ne[2] == 1 &&
                    mask->ne[3] == 1,
                Op::flash_attn, q, mask, "mask must be f32 [n_kv, >= n_q]");
    require(p.softcap >= 0.0f && p.window >= 0, Op::flash_attn, q, k, "softcap and window must be >= 0");
    Tensor* t = new_tensor(GgmlType::F32, {v->ne[0], q->ne[1], q->ne[2], 1}, Op::flash_attn, {q, k, v, mask});
    t->set_params(p);
    return t;
}

// ---- the node list --------------------------------------------------------------------------

std::span<Tensor* const> Graph::nodes() {
    if (nodes_valid_) return nodes_;
    // Roots: outputs, and writes into memory that outlives the graph (a persistent tensor).
    std::vector<char> needed(all_.size(), 0);
    std::vector<Tensor*> stack;
    auto owned = [&](const Tensor* t) {
        return t->index >= 0 && static_cast<size_t>(t->index) < all_.size() && all_[t->index] == t;
    };
    for (Tensor* t : all_) {
        const bool external_write = t->view_src && !op_is_view(t->op) && !owned(t->base());
        if ((t->flags & kTensorOutput) || external_write) stack.push_back(t);
    }
    while (!stack.empty()) {
        Tensor* t = stack.back();
        stack.pop_back();
        if (!owned(t) || needed[t->index]) continue;
        needed[t->index] = 1;
        for (Tensor* s : t->src)
            if (s) stack.push_back(s);
        if (t->view_src) stack.push_back(t->view_src);
    }
    nodes_.clear();
    for (Tensor* t : all_)
        if (needed[t->index] && t->op != Op::none) nodes_.push_back(t);
    nodes_valid_ = true;
    return nodes_;
}

}  // namespace pocket

