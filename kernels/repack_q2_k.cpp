// Q2_K row interleaving (8 rows) and its scalar GEMM, which follows the reference order of
// dot_order.hpp per output: the exact integer sums of a super-block (isum over the 16 groups'
// scales, summ over their mins), then fma(d, isum), fma(-dmin, summ) per super-block in order.
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>

namespace pocket::kernels {

size_t q2_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q2_Kx8>(rows, n); }

void q2_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_blocks<block_q2_K>(w, w_stride, rows, n / kQKK, static_cast<block_q2_Kx8*>(dst),
                                  [](block_q2_Kx8& o, const block_q2_K* const* blocks) {
                                      const uint8_t *qs[kQ4_0x8Rows], *sc[kQ4_0x8Rows];
                                      for (int r = 0; r < kQ4_0x8Rows; ++r) {
                                          o.d[r] = blocks[r]->d;
                                          o.dmin[r] = blocks[r]->dmin;
                                          qs[r] = blocks[r]->qs;
                                          sc[r] = blocks[r]->scales;
                                      }
                                      transpose_dwords<kQKK / 16>(qs, o.qs[0][0]);
                                      transpose_dwords<kQKK / 64>(sc, reinterpret_cast<uint8_t*>(o.scales));
                                  });
}

void q2_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride) {
    superblock_records_gemm<block_q2_Kx8>(
        n, packed, rows, a, a_stride, m, c, c_stride, [](const block_q2_Kx8* x, int64_t nb, const block_q8_K* y, int r) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t isum = 0, summ = 0;
                for (int e = 0; e < kQKK; ++e) {  // element 128h + 32s + l: byte 32h + l, shifted by 2s
                    const int h = e / 128, s = e / 32 % 4, l = e % 32, group = e / 16;
                    const int level = (x[b].qs[8 * h + l / 4][r][l % 4] >> (2 * s)) & 3;
                    const int scale = static_cast<int>(x[b].scales[group / 4][r] >> (8 * (group % 4))) & 0xF;
                    isum += scale * level * y[b].qs[e];
                }
                for (int group = 0; group < 16; ++group)
                    summ += static_cast<int>(x[b].scales[group / 4][r] >> (8 * (group % 4) + 4) & 0xF) * y[b].bsums[group];
                acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
                acc = std::fma(-(y[b].d * fp16_to_f32(x[b].dmin[r])), static_cast<float>(summ), acc);
            }
            return acc;
        });
}

}  // namespace pocket::kernels
