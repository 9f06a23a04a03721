// Q3_K row interleaving (8 rows) and its scalar GEMM, which follows the reference order of
// dot_order.hpp per output: the exact integer sum of a super-block (each group's dot times its
// six-bit scale minus 32), then fma(d, isum) per super-block in order (Q3_K has no mins).
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>

namespace pocket::kernels {

size_t q3_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q3_Kx8>(rows, n); }

void q3_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_blocks<block_q3_K>(w, w_stride, rows, n / kQKK, static_cast<block_q3_Kx8*>(dst),
                                  [](block_q3_Kx8& o, const block_q3_K* const* blocks) {
                                      const uint8_t *qs[kQ4_0x8Rows], *hm[kQ4_0x8Rows];
                                      for (int r = 0; r < kQ4_0x8Rows; ++r) {
                                          o.d[r] = blocks[r]->d;
                                          put_scales12(o.scales, r, blocks[r]->scales);
                                          qs[r] = blocks[r]->qs;
                                          hm[r] = blocks[r]->hmask;
                                      }
                                      transpose_dwords<kQKK / 16>(qs, o.qs[0][0]);
                                      transpose_dwords<kQKK / 32>(hm, o.hmask[0][0]);
                                  });
}

void q3_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride) {
    superblock_records_gemm<block_q3_Kx8>(
        n, packed, rows, a, a_stride, m, c, c_stride, [](const block_q3_Kx8* x, int64_t nb, const block_q8_K* y, int r) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                uint8_t sc12[12];
                get_scales12(x[b].scales, r, sc12);
                int32_t isum = 0;
                for (int e = 0; e < kQKK; ++e) {  // element 128h + 32s + l: byte 32h + l, shifted by 2s
                    const int h = e / 128, s = e / 32 % 4, l = e % 32;
                    const int low = (x[b].qs[8 * h + l / 4][r][l % 4] >> (2 * s)) & 3;
                    const int high = (x[b].hmask[l / 4][r][l % 4] >> (4 * h + s)) & 1;
                    isum += q3k_scale(e / 16, sc12) * (low - (high ? 0 : 4)) * y[b].qs[e];
                }
                acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
            }
            return acc;
        });
}

}  // namespace pocket::kernels
