// Q6_K row interleaving (8 rows) and its scalar GEMM, which follows the reference order of
// dot_order.hpp per output: the exact integer sum of a super-block, then fma(d, isum) per
// super-block in order (Q6_K has no mins).
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cmath>
#include <cstring>

namespace pocket::kernels {

size_t q6_Kx8_packed_bytes(int64_t rows, int64_t n) { return superblock_records_bytes<block_q6_Kx8>(rows, n); }

// Rows' dwords of ql (quarters 0 and 2: a, 1 and 3: b) and qh for the same 4 elements, as
// the three planes of block_q6_Kx8. Masks go before the shifts, so no bit crosses a byte.
// Four rows at a time with SSE2 (every x86-64); with the transposes around it this pass adds
// about 10-30 ms to a 1B Q6_K model's load.
#if defined(__SSE2__)
using Dwords4 = __m128i;
static Dwords4 load4(const uint32_t* p) { return _mm_load_si128(reinterpret_cast<const __m128i*>(p)); }
static void store4(uint8_t* p, Dwords4 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
static Dwords4 bits(Dwords4 v, uint32_t m) { return _mm_and_si128(v, _mm_set1_epi32(static_cast<int>(m))); }
template <int S> Dwords4 shl(Dwords4 v) { return _mm_slli_epi32(v, S); }
template <int S> Dwords4 shr(Dwords4 v) { return _mm_srli_epi32(v, S); }
static Dwords4 either(Dwords4 a, Dwords4 b) { return _mm_or_si128(a, b); }
constexpr int kRowsAtOnce = 4;
#else
using Dwords4 = uint32_t;
static Dwords4 load4(const uint32_t* p) { return *p; }
static void store4(uint8_t* p, Dwords4 v) { std::memcpy(p, &v, 4); }
static Dwords4 bits(Dwords4 v, uint32_t m) { return v & m; }
template <int S> Dwords4 shl(Dwords4 v) { return v << S; }
template <int S> Dwords4 shr(Dwords4 v) { return v >> S; }
static Dwords4 either(Dwords4 a, Dwords4 b) { return a | b; }
constexpr int kRowsAtOnce = 1;
#endif

void q6_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_blocks<block_q6_K>(w, w_stride, rows, n / kQKK, static_cast<block_q6_Kx8*>(dst),
                                  [](block_q6_Kx8& o, const block_q6_K* const* blocks) {
                                      const uint8_t *ql[kQ4_0x8Rows], *qh[kQ4_0x8Rows];
                                      for (int r = 0; r < kQ4_0x8Rows; ++r) {
                                          o.d[r] = blocks[r]->d;
                                          ql[r] = blocks[r]->ql;
                                          qh[r] = blocks[r]->qh;
                                      }
                                      // ggml's chunks, eight rows together, then their bits into the planes
                                      alignas(16) uint32_t lt[kQKK / 8][kQ4_0x8Rows], ht[kQKK / 16][kQ4_0x8Rows];
                                      transpose_dwords<kQKK / 8>(ql, reinterpret_cast<uint8_t*>(lt));
                                      transpose_dwords<kQKK / 16>(qh, reinterpret_cast<uint8_t*>(ht));
                                      for (int h = 0; h < 2; ++h) {
                                          for (int c = 0; c < 8; ++c) {
                                              for (int r = 0; r < kQ4_0x8Rows; r += kRowsAtOnce) {
                                                  const Dwords4 a = load4(&lt[16 * h + c][r]), b = load4(&lt[16 * h + 8 + c][r]),
                                                                hb = load4(&ht[8 * h + c][r]);
                                                  auto* q = o.q[8 * h + c];
                                                  store4(q[0][r], either(bits(a, 0x0f0f0f0f), either(shl<4>(bits(hb, 0x03030303)),
                                                                                                    shl<2>(bits(hb, 0x30303030)))));
                                                  store4(q[1][r], either(bits(b, 0x0f0f0f0f),
                                                                         either(shl<2>(bits(hb, 0x0c0c0c0c)), bits(hb, 0xc0c0c0c0))));
                                                  store4(q[2][r], either(bits(shr<4>(a), 0x0f0f0f0f), bits(b, 0xf0f0f0f0)));
                                              }
                                          }
                                      }
                                      for (int g = 0; g < kQKK / 16; ++g)
                                          for (int r = 0; r < kQ4_0x8Rows; ++r) o.scales[g][r] = blocks[r]->scales[g];
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
                    isum += x[b].scales[e / 16][r] * (level - 32) * y[b].qs[e];
                }
                acc = std::fma(y[b].d * fp16_to_f32(x[b].d[r]), static_cast<float>(isum), acc);
            }
            return acc;
        });
}

}  // namespace pocket::kernels
