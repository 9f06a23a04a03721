// Q6_K row interleaving (8 rows) and its scalar GEMM, which follows the reference order of
// dot_order.hpp per output: the exact integer sum of a super-block, then fma(d, isum) per
// super-block in order (Q6_K has no mins).
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>
#include <cstring>

namespace pocket::kernels {

size_t q6_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q6_Kx8>(rows, n); }

// Row r's dwords of ql (quarters 0 and 2: a, 1 and 3: b) and qh for the same 4 elements, as
// the three planes of block_q6_Kx8. Masks go before the shifts, so no bit crosses a byte.
static void q6_planes(uint32_t a, uint32_t b, uint32_t hb, uint32_t out[3]) {
    out[0] = (a & 0x0f0f0f0fu) | (hb & 0x03030303u) << 4 | (hb & 0x30303030u) << 2;
    out[1] = (b & 0x0f0f0f0fu) | (hb & 0x0c0c0c0cu) << 2 | (hb & 0xc0c0c0c0u);
    out[2] = (a >> 4 & 0x0f0f0f0fu) | (b & 0xf0f0f0f0u);
}

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
                                      // ggml's chunks, eight rows together, then their bits into the planes
                                      alignas(16) uint32_t lt[kQKK / 8][kQ4_0x8Rows], ht[kQKK / 16][kQ4_0x8Rows];
                                      transpose_dwords<kQKK / 8>(ql, reinterpret_cast<uint8_t*>(lt));
                                      transpose_dwords<kQKK / 16>(qh, reinterpret_cast<uint8_t*>(ht));
                                      for (int h = 0; h < 2; ++h) {
                                          for (int c = 0; c < 8; ++c) {
                                              for (int r = 0; r < kQ4_0x8Rows; ++r) {
                                                  uint32_t planes[3];
                                                  q6_planes(lt[16 * h + c][r], lt[16 * h + 8 + c][r], ht[8 * h + c][r], planes);
                                                  for (int p = 0; p < 3; ++p) std::memcpy(o.q[8 * h + c][p][r], &planes[p], 4);
                                              }
                                          }
                                      }
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
                    const auto plane = [&](int p) { return static_cast<int>(x[b].q[8 * h + cc][p][r][i]); };
                    const int level = q < 2 ? plane(q) & 0x3f
                                            : (q == 2 ? plane(2) & 0xF : plane(2) >> 4) | (plane(q - 2) >> 6) << 4;
                    isum += x[b].scales[e / 64][r][e / 16 % 4] * (level - 32) * y[b].qs[e];
                }
                acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
            }
            return acc;
        });
}

}  // namespace pocket::kernels
