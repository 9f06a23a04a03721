// Q4_K and Q5_K row interleaving (8 rows) and their scalar GEMM, which follows the reference
// order of dot_order.hpp per output: the exact integer sums of a super-block, then
// fma(d, isum), fma(-dmin, summ) per super-block in order. Q5_K's record is Q4_K's with the
// fifth bits added.
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>
#include <type_traits>

namespace pocket::kernels {

size_t q4_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q4_Kx8>(rows, n); }
size_t q5_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q5_Kx8>(rows, n); }

namespace {

// Eight rows' super-blocks b into one record: d, dmin and the scale dwords one row at a time,
// the 4-byte chunks of qs (and Q5_K's qh) transposed.
template <class In, class Out>
void pack_k45(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_blocks<In>(w, w_stride, rows, n / kQKK, static_cast<Out*>(dst), [](Out& o, const In* const* blocks) {
        const uint8_t *qs[kQ4_0x8Rows], *qh[kQ4_0x8Rows];
        for (int r = 0; r < kQ4_0x8Rows; ++r) {
            o.d[r] = blocks[r]->d;
            o.dmin[r] = blocks[r]->dmin;
            put_scales12(o.scales, r, blocks[r]->scales);
            qs[r] = blocks[r]->qs;
            if constexpr (std::is_same_v<In, block_q5_K>) qh[r] = blocks[r]->qh;
        }
        transpose_dwords<kQKK / 8>(qs, o.qs[0][0]);
        if constexpr (std::is_same_v<In, block_q5_K>) transpose_dwords<kQKK / 32>(qh, o.qh[0][0]);
    });
}

template <class R>
void gemm_k45(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c, size_t c_stride) {
    superblock_records_gemm<R>(n, packed, rows, a, a_stride, m, c, c_stride, [](const R* x, int64_t nb, const block_q8_K* y, int r) {
        float acc = 0.0f;
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t sc12[12];
            get_scales12(x[b].scales, r, sc12);
            int32_t isum = 0, summ = 0;
            for (int s = 0; s < 8; ++s) {
                uint8_t sc, mn;
                k4_scale_min(s, sc12, sc, mn);
                int32_t dot = 0;
                for (int e = 0; e < 32; ++e) {  // element 32s + e: chunk 8(s/2) + e/4, byte e%4
                    const uint8_t q = x[b].qs[8 * (s / 2) + e / 4][r][e % 4];
                    int level = (s % 2) ? (q >> 4) : (q & 0xF);
                    if constexpr (std::is_same_v<R, block_q5_Kx8>) level |= ((x[b].qh[e / 4][r][e % 4] >> s) & 1) << 4;
                    dot += level * y[b].qs[32 * s + e];
                }
                isum += sc * dot;
                summ += mn * (y[b].bsums[2 * s] + y[b].bsums[2 * s + 1]);
            }
            acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
            acc = std::fma(-(y[b].d * fp16_to_f32(x[b].dmin[r])), static_cast<float>(summ), acc);
        }
        return acc;
    });
}

}  // namespace

void q4_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    pack_k45<block_q4_K, block_q4_Kx8>(w, w_stride, rows, n, dst);
}
void q5_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    pack_k45<block_q5_K, block_q5_Kx8>(w, w_stride, rows, n, dst);
}

void q4_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride) {
    gemm_k45<block_q4_Kx8>(n, packed, rows, a, a_stride, m, c, c_stride);
}
void q5_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride) {
    gemm_k45<block_q5_Kx8>(n, packed, rows, a, a_stride, m, c, c_stride);
}

}  // namespace pocket::kernels
