// IQ4_XS row interleaving (8 rows) and its scalar GEMM, which follows the reference order of
// dot_order.hpp per output: the exact integer sum of a super-block (each sub-block's dot
// times its scale), then fma(d, isum) per super-block in order (IQ4_XS has no mins).
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>
#include <cstring>

namespace pocket::kernels {

size_t iq4_xsx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_iq4_xsx8>(rows, n); }

void iq4_xsx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_blocks<block_iq4_xs>(w, w_stride, rows, n / kQKK, static_cast<block_iq4_xsx8*>(dst),
                                    [](block_iq4_xsx8& o, const block_iq4_xs* const* blocks) {
                                        const uint8_t* qs[kQ4_0x8Rows];
                                        for (int r = 0; r < kQ4_0x8Rows; ++r) {
                                            o.d[r] = blocks[r]->d;
                                            std::memcpy(&o.scales_l[r], blocks[r]->scales_l, 4);
                                            o.scales_h[r] = blocks[r]->scales_h;
                                            qs[r] = blocks[r]->qs;
                                        }
                                        transpose_dwords<kQKK / 8>(qs, o.qs[0][0]);
                                    });
}

void iq4_xsx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                          size_t c_stride) {
    superblock_records_gemm<block_iq4_xsx8>(
        n, packed, rows, a, a_stride, m, c, c_stride, [](const block_iq4_xsx8* x, int64_t nb, const block_q8_K* y, int r) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                int32_t isum = 0;
                for (int ib = 0; ib < 8; ++ib) {
                    int32_t s = 0;
                    for (int e = 0; e < 32; ++e) {  // element 32ib + e: chunk 4ib + (e % 16) / 4, byte e % 4
                        const uint8_t q = x[b].qs[4 * ib + (e % 16) / 4][r][e % 4];
                        s += kIq4nlValues[e < 16 ? q & 0xF : q >> 4] * y[b].qs[32 * ib + e];
                    }
                    isum += iq4xs_scale_of(x[b].scales_l[r], x[b].scales_h[r], ib) * s;
                }
                acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
            }
            return acc;
        });
}

}  // namespace pocket::kernels
