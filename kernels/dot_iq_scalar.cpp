// Scalar dot products of the grid i-quants and the ternary types against Q8_K activations,
// the reference order of dot_order.hpp: each 256-super-block's sum is an exact integer
// (sub-block scales are the odd integers 2s+1; IQ1's +-1/8 shift is taken as 8 * level +- 1),
// added with one fma of the two block scales; the constant factor of the type's scale
// (1/8, 1/4) is applied once at the end (a power of two: exact).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/iq_grids.hpp"
#include "kernels/row_functions.hpp"

#include <cmath>
#include <cstring>

namespace pocket::kernels::scalar {
namespace {

// Sum over 8 weights of level * sign * activation.
inline int32_t grid8_dot(uint64_t entry, uint8_t signs, const int8_t* y) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) {
        const int v = grid_byte(entry, j) * y[j];
        s += (signs >> j) & 1 ? -v : v;
    }
    return s;
}

inline int32_t grid4x2_dot(uint32_t e1, uint32_t e2, uint8_t signs, const int8_t* y) {
    return grid8_dot(static_cast<uint64_t>(e1) | static_cast<uint64_t>(e2) << 32, signs, y);
}

// IQ1 levels are int8 -1, 0, +1.
inline int32_t grid8_dot_signed_levels(uint64_t entry, const int8_t* y) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += static_cast<int8_t>(grid_byte(entry, j)) * y[j];
    return s;
}

inline int32_t sum8(const int8_t* y) {
    int32_t s = 0;
    for (int j = 0; j < 8; ++j) s += y[j];
    return s;
}

// The super-block loop every type here shares: `isum(x_block, y_block)` is the block's exact
// integer sum, `d_bits(x_block)` its fp16 scale.
template <class Block, class ISum, class DBits>
float superblock_dot(int64_t n, const void* vx, const void* vy, float factor, ISum isum, DBits d_bits) {
    const auto* x = static_cast<const Block*>(vx);
    const auto* y = static_cast<const block_q8_K*>(vy);
    float acc = 0;
    for (int64_t i = 0; i < n / kQKK; ++i)
        acc = std::fma(y[i].d * fp16_to_f32(d_bits(x[i])), static_cast<float>(isum(x[i], y[i])), acc);
    return acc * factor;
}

template <class Block>
uint16_t d_field(const Block& b) { return b.d; }

}  // namespace

void vec_dot_iq2_xxs(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq2_xxs>(n, x, y, 0.125f, [](const block_iq2_xxs& b, const block_q8_K& a) {
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            uint32_t aux[2];
            std::memcpy(aux, b.qs + 4 * ib, 8);
            int32_t s = 0;
            for (int l = 0; l < 4; ++l)
                s += grid8_dot(kIq2xxsGrid[(aux[0] >> (8 * l)) & 255], iq_signs_from7(aux[1] >> (7 * l)),
                               a.qs + 32 * ib + 8 * l);
            isum += static_cast<int32_t>(2 * (aux[1] >> 28) + 1) * s;
        }
        return isum;
    }, d_field<block_iq2_xxs>);
}

void vec_dot_iq2_xs(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq2_xs>(n, x, y, 0.125f, [](const block_iq2_xs& b, const block_q8_K& a) {
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            for (int half16 = 0; half16 < 2; ++half16) {
                int32_t s = 0;
                for (int l = 2 * half16; l < 2 * half16 + 2; ++l) {
                    const uint16_t q = b.qs[4 * ib + l];
                    s += grid8_dot(kIq2xsGrid[q & 511], iq_signs_from7(q >> 9), a.qs + 32 * ib + 8 * l);
                }
                isum += (2 * ((b.scales[ib] >> (4 * half16)) & 0xF) + 1) * s;
            }
        }
        return isum;
    }, d_field<block_iq2_xs>);
}

void vec_dot_iq2_s(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq2_s>(n, x, y, 0.125f, [](const block_iq2_s& b, const block_q8_K& a) {
        const uint8_t* signs = b.qs + kQKK / 8;
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            for (int half16 = 0; half16 < 2; ++half16) {
                int32_t s = 0;
                for (int l = 2 * half16; l < 2 * half16 + 2; ++l) {
                    const int index = b.qs[4 * ib + l] | ((b.qh[ib] << (8 - 2 * l)) & 0x300);
                    s += grid8_dot(kIq2sGrid[index], signs[4 * ib + l], a.qs + 32 * ib + 8 * l);
                }
                isum += (2 * ((b.scales[ib] >> (4 * half16)) & 0xF) + 1) * s;
            }
        }
        return isum;
    }, d_field<block_iq2_s>);
}

void vec_dot_iq3_xxs(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq3_xxs>(n, x, y, 0.25f, [](const block_iq3_xxs& b, const block_q8_K& a) {
        const uint8_t* scales_and_signs = b.qs + kQKK / 4;
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            uint32_t aux;
            std::memcpy(&aux, scales_and_signs + 4 * ib, 4);
            const uint8_t* qs = b.qs + 8 * ib;
            int32_t s = 0;
            for (int l = 0; l < 4; ++l)
                s += grid4x2_dot(kIq3xxsGrid[qs[2 * l]], kIq3xxsGrid[qs[2 * l + 1]], iq_signs_from7(aux >> (7 * l)),
                                 a.qs + 32 * ib + 8 * l);
            isum += static_cast<int32_t>(2 * (aux >> 28) + 1) * s;
        }
        return isum;
    }, d_field<block_iq3_xxs>);
}

void vec_dot_iq3_s(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq3_s>(n, x, y, 1.0f, [](const block_iq3_s& b, const block_q8_K& a) {
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const uint8_t* qs = b.qs + 8 * ib;
            const int qh = b.qh[ib];
            int32_t s = 0;
            for (int l = 0; l < 4; ++l) {
                const int i1 = qs[2 * l] | ((qh << (8 - 2 * l)) & 256);
                const int i2 = qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
                s += grid4x2_dot(kIq3sGrid[i1], kIq3sGrid[i2], b.signs[4 * ib + l], a.qs + 32 * ib + 8 * l);
            }
            isum += (2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1) * s;
        }
        return isum;
    }, d_field<block_iq3_s>);
}

void vec_dot_iq1_s(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq1_s>(n, x, y, 0.125f, [](const block_iq1_s& b, const block_q8_K& a) {
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            const int qh = b.qh[ib];
            int32_t s = 0;
            for (int l = 0; l < 4; ++l)
                s += grid8_dot_signed_levels(kIq1sGrid[b.qs[4 * ib + l] | (((qh >> (3 * l)) & 7) << 8)],
                                             a.qs + 32 * ib + 8 * l);
            const int32_t ysum = a.bsums[2 * ib] + a.bsums[2 * ib + 1];
            const int32_t shifted = 8 * s + (qh & 0x8000 ? -ysum : ysum);  // 8 * (level + delta) summed
            isum += (2 * ((qh >> 12) & 7) + 1) * shifted;
        }
        return isum;
    }, d_field<block_iq1_s>);
}

void vec_dot_iq1_m(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_iq1_m>(n, x, y, 0.125f, [](const block_iq1_m& b, const block_q8_K& a) {
        uint16_t sc[4];
        std::memcpy(sc, b.scales, 8);
        int32_t isum = 0;
        for (int ib = 0; ib < 8; ++ib) {
            for (int half16 = 0; half16 < 2; ++half16) {
                int32_t shifted = 0;
                for (int l = 2 * half16; l < 2 * half16 + 2; ++l) {
                    const int h = b.qh[2 * ib + l / 2] >> (4 * (l % 2));
                    const int8_t* yl = a.qs + 32 * ib + 8 * l;
                    const int32_t s = grid8_dot_signed_levels(kIq1sGrid[b.qs[4 * ib + l] | ((h & 7) << 8)], yl);
                    shifted += 8 * s + (h & 0x08 ? -sum8(yl) : sum8(yl));
                }
                isum += (2 * ((sc[ib / 2] >> (6 * (ib % 2) + 3 * half16)) & 7) + 1) * shifted;
            }
        }
        return isum;
    }, [](const block_iq1_m& b) { return iq1m_d_bits(b); });
}

void vec_dot_tq1_0(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_tq1_0>(n, x, y, 1.0f, [](const block_tq1_0& b, const block_q8_K& a) {
        auto trit = [](uint8_t byte, int k) { return tq1_trit(byte, k) - 1; };  // -1, 0, +1
        const int8_t* q = a.qs;
        int32_t isum = 0;
        for (int k = 0; k < 5; ++k)
            for (int m = 0; m < 32; ++m) isum += trit(b.qs[m], k) * *q++;
        for (int k = 0; k < 5; ++k)
            for (int m = 32; m < 48; ++m) isum += trit(b.qs[m], k) * *q++;
        for (int k = 0; k < 4; ++k)
            for (int m = 0; m < 4; ++m) isum += trit(b.qh[m], k) * *q++;
        return isum;
    }, d_field<block_tq1_0>);
}

void vec_dot_tq2_0(int64_t n, float* out, const void* x, const void* y) {
    *out = superblock_dot<block_tq2_0>(n, x, y, 1.0f, [](const block_tq2_0& b, const block_q8_K& a) {
        const int8_t* q = a.qs;
        int32_t isum = 0;
        for (int j = 0; j < kQKK / 4; j += 32)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m) isum += (((b.qs[j + m] >> (2 * l)) & 3) - 1) * *q++;
        return isum;
    }, d_field<block_tq2_0>);
}

}  // namespace pocket::kernels::scalar
