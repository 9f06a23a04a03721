// Q4_0 row interleaving (8 rows) and its scalar GEMM, which follows the reference order
// of dot_order.hpp per output: block b of row r into lane b % 8, fold 4, 2, 1.
#include "kernels/dot_order.hpp"
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cstring>

namespace pocket::kernels {

size_t q4_0x8_packed_bytes(int64_t rows, int64_t n) {
    return static_cast<size_t>(rows / kQ4_0x8Rows) * static_cast<size_t>(n / kQK) * sizeof(block_q4_0x8);
}

void q4_0x8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst) {
    interleave_dword_rows<block_q4_0>(w, w_stride, rows, n / kQK, static_cast<block_q4_0x8*>(dst));
}

void q4_0x8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride) {
    const int64_t nb = n / kQK;
    const auto* p = static_cast<const block_q4_0x8*>(packed);
    for (int64_t j = 0; j < m; ++j) {
        const auto* y = reinterpret_cast<const block_q8_0*>(static_cast<const uint8_t*>(a) + a_stride * static_cast<size_t>(j));
        for (int64_t g = 0; g < rows / kQ4_0x8Rows; ++g) {
            float acc[kQ4_0x8Rows][kBlockLanes] = {};
            for (int64_t b = 0; b < nb; ++b) {
                const block_q4_0x8& x = p[g * nb + b];
                for (int r = 0; r < kQ4_0x8Rows; ++r) {
                    int32_t s = 0;
                    for (int k = 0; k < 16; ++k) {
                        const uint8_t q = x.qs[k / 4][r][k % 4];
                        s += ((q & 0xF) - 8) * y[b].qs[k];
                        s += ((q >> 4) - 8) * y[b].qs[k + 16];
                    }
                    float& lane = acc[r][b % kBlockLanes];
                    lane = std::fma(fp16_to_f32(x.d[r]) * fp16_to_f32(y[b].d), static_cast<float>(s), lane);
                }
            }
            for (int r = 0; r < kQ4_0x8Rows; ++r)
                c[c_stride * static_cast<size_t>(j) + static_cast<size_t>(g * kQ4_0x8Rows + r)] = fold_lanes<kBlockLanes>(acc[r]);
        }
    }
}

}  // namespace pocket::kernels
