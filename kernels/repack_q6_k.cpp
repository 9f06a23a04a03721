// Q6_K row interleaving (8 rows) and its scalar GEMM, which follows the reference order of
// dot_order.hpp per output: the exact integer sum of a super-block, then fma(d, isum) per
// super-block in order (Q6_K has no mins).
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>

namespace pocket::kernels {

size_t q6_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q6_Kx8>(rows, n); }

void q6_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_blocks<block_q6_K>(w, w_stride, rows, n / kQKK, static_cast<block_q6_Kx8*>(dst),
                                  [](block_q6_Kx8& o, const block_q6_K* const* blocks) {
                                      const uint8_t *ql[kQ4_0x8Rows], *qh[kQ4_0x8Rows], *sc[kQ4_0x8Rows];
                                      for (int r = 0; r < kQ4_0x8Rows; ++r) {
                                          o.d[r] = blocks[r]->d;
                                          ql[r] = blocks[r]->ql;
                                          qh[r] = blocks[r]->qh;
                                          sc[r] = reinterpret_cast<const uint8_t*>(blocks[r]->scales);
                                      }
                                      transpose_dwords<kQKK / 8>(ql, o.ql[0][0]);
                                      transpose_dwords<kQKK / 16>(qh, o.qh[0][0]);
                                      transpose_dwords<kQKK / 64>(sc, reinterpret_cast<uint8_t*>(o.scales));
                                  });
}

void q6_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride) {
    superblock_records_gemm<block_q6_Kx8>(
        n, packed, rows, a, a_stride, m, c, c_stride, [](const block_q6_Kx8* x, int64_t nb, const block_q8_K* y, int r) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t isum = 0;
                for (int e = 0; e < kQKK; ++e) {  // element 128h + 32q + 4c + i
                    const int h = e / 128, q = e / 32 % 4, cc = e / 4 % 8, i = e % 4;
                    const uint8_t lq = x[b].ql[16 * h + 8 * (q % 2) + cc][r][i];
                    const int low = q < 2 ? lq & 0xF : lq >> 4;
                    const int high = (x[b].qh[8 * h + cc][r][i] >> (2 * q)) & 3;
                    isum += x[b].scales[e / 64][r][e / 16 % 4] * ((low | high << 4) - 32) * y[b].qs[e];
                }
                acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
            }
            return acc;
        });
}

}  // namespace pocket::kernels
