// mul_mat: out[j][i] = dot(w row i, x row j).
// Phase 1: the activations are converted once to the weight's vec_dot_type (shared scratch,
// rows split across threads). Phase 2: the threads take the weight rows in chunks (their own
// share first, then the others' leftovers) and compute every activation row for them,
// with vec_dot for one activation row and gemm for several. Each output element is computed
// by exactly one thread by a kernel whose result does not depend on the split: bitwise
// identical for any thread count.
#include "backend/cpu/cpu_device.hpp"
#include "backend/cpu/ops.hpp"
#include "kernels/kernels.hpp"

#include <algorithm>

namespace pocket::cpu {

namespace {

using kernels::TypeKernels;

// The weight type's kernels, when it has a dot product (and hence a gemm).
const TypeKernels* dot_kernels(GgmlType type) {
    const TypeKernels* k = kernels::type_kernels(type);
    return k && k->vec_dot && k->gemm ? k : nullptr;
}

// Activations can be used in place when they already are f32 rows of the right type.
bool needs_conversion(const Tensor& x, const TypeKernels& k) {
    return k.vec_dot_type != GgmlType::F32 || x.nb[0] != sizeof(float);
}

size_t act_row_bytes(const TypeKernels& k, int64_t n) {
    const auto& ti = ggml_type_info(k.vec_dot_type);
    return static_cast<size_t>(n / ti.block_size) * ti.block_bytes;
}

}  // namespace

bool mul_mat_supported(const Tensor& node) {
    const Tensor& w = *node.src[0];
    const TypeKernels* k = dot_kernels(w.type);
    if (!k) return false;
    return w.ne[0] % ggml_type_info(k->vec_dot_type).block_size == 0;
}

size_t mul_mat_work_size(const Tensor& node, int nth) {
    const Tensor& w = *node.src[0];
    const Tensor& x = *node.src[1];
    const TypeKernels* k = dot_kernels(w.type);
    if (!k || !needs_conversion(x, *k)) return 0;
    size_t bytes = round_up(act_row_bytes(*k, x.ne[0]) * static_cast<size_t>(x.nrows()), kScratchAlign);
    if (x.nb[0] != sizeof(float)) bytes += per_thread_bytes(static_cast<size_t>(x.ne[0]) * sizeof(float), nth);
    return bytes;
}

void op_mul_mat(const OpContext& ctx, Tensor& dst) {
    const Tensor& w = *dst.src[0];
    const Tensor& x = *dst.src[1];
    const TypeKernels& k = *dot_kernels(w.type);
    const int64_t n = w.ne[0];
    const int64_t m = x.ne[1];

    // Activation rows: either x itself or its converted copy in the scratch.
    const bool convert = needs_conversion(x, k);
    const size_t a_row = convert ? act_row_bytes(k, n) : x.nb[1];
    auto act_plane = [&](int64_t i2, int64_t i3) -> const uint8_t* {
        if (!convert) return static_cast<const uint8_t*>(x.data) + i2 * x.nb[2] + i3 * x.nb[3];
        return ctx.work + static_cast<size_t>((i3 * x.ne[2] + i2) * m) * a_row;
    };
    if (convert) {
        float* tmp = nullptr;  // gather buffer for strided rows, after the converted rows
        const size_t converted = a_row * static_cast<size_t>(x.nrows());
        const auto [r0, r1] = ctx.range(x.nrows());
        for (int64_t r = r0; r < r1; ++r) {
            const RowIndex ix = row_index(x, r);
            const uint8_t* src = row_ptr(x, ix);
            const float* row = reinterpret_cast<const float*>(src);
            if (x.nb[0] != sizeof(float)) {
                if (!tmp) tmp = ctx.thread_scratch<float>(static_cast<size_t>(n) * sizeof(float), round_up(converted, kScratchAlign));
                for (int64_t i = 0; i < n; ++i) tmp[i] = *reinterpret_cast<const float*>(src + i * x.nb[0]);
                row = tmp;
            }
            kernels::convert_activation_row(k.vec_dot_type, row, ctx.work + static_cast<size_t>(r) * a_row, n);
        }
        ctx.barrier();
    }

    // Weight rows in whole tiles of 16, so that no two threads write the same 64-byte line
    // of an output row (false sharing). Each thread takes its share of the tiles a chunk at a
    // time, in order (a decoding GEMV streams its rows from memory: chunks handed out in turn
    // restarted that stream, 8% slower at -t 2), then helps with the others' from their ends:
    // a thread slowed by a neighbour on its core holds the op up for one chunk, not for half
    // the matrix. Every output element comes from one kernel call whatever the chunks: the same
    // bits for any thread count.
    constexpr int64_t kTile = 16;
    constexpr int64_t kChunksPerThread = 8;
    const int64_t tiles = (w.ne[1] + kTile - 1) / kTile;
    // A weight the CPU device repacked at load (2-D, rows a multiple of the group).
    const kernels::RepackKernels* packed = repacked(w);
    static_assert(kTile % 8 == 0, "tiles hold whole groups of packed rows");
    const int64_t r2 = x.ne[2] / w.ne[2];
    const int64_t r3 = x.ne[3] / w.ne[3];
    const size_t c_stride = dst.nb[1] / sizeof(float);
    // Every chunk reads the same activation rows: what a GEMM derives from them (Q4_0's block
    // sums) is worked out once per thread, not once per chunk.
    const kernels::SameActivations same_activations;
    auto compute_tiles = [&](int64_t t0, int64_t t1) {
        const int64_t i0 = t0 * kTile, i1 = std::min(t1 * kTile, w.ne[1]);
        for (int64_t i3 = 0; i3 < x.ne[3]; ++i3) {
            for (int64_t i2 = 0; i2 < x.ne[2]; ++i2) {
                const uint8_t* wp = static_cast<const uint8_t*>(w.data) + (i2 / r2) * w.nb[2] + (i3 / r3) * w.nb[3] + i0 * w.nb[1];
                const uint8_t* ap = act_plane(i2, i3);
                float* out = static_cast<float*>(dst.element(i0, 0, i2, i3));
                if (packed) {  // whole groups of rows: i0 is a multiple of kTile, i1 - i0 of the group
                    const size_t group_bytes = packed->packed_bytes(packed->rows_per_group, n);
                    packed->gemm(n,
                                 static_cast<const uint8_t*>(w.data) + static_cast<size_t>(i0 / packed->rows_per_group) * group_bytes,
                                 i1 - i0, ap, a_row, m, out, c_stride);
                } else if (m == 1) {
                    for (int64_t i = 0; i < i1 - i0; ++i) k.vec_dot(n, out + i, wp + i * w.nb[1], ap);
                } else {
                    k.gemm(n, wp, w.nb[1], i1 - i0, ap, a_row, m, out, c_stride);
                }
            }
        }
    };
    ctx.for_each_chunk_shared(tiles, std::max<int64_t>(1, tiles / (kChunksPerThread * ctx.nth)), compute_tiles);
}

}  // namespace pocket::cpu
