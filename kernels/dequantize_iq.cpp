// Row dequantization of the grid i-quants, the ternary types and MXFP4, in ggml's float
// expressions so results are bitwise equal (tested against shared/reference/e_dequant).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/iq_grids.hpp"
#include "kernels/row_functions.hpp"

#include <cstring>

namespace pocket::kernels {
namespace {

inline float sign_of(uint8_t signs, int j) { return (signs >> j) & 1 ? -1.f : 1.f; }

// 8 weights: scale * grid level * sign.
inline void grid8_signed(float* y, float scale, uint64_t entry, uint8_t signs) {
    for (int j = 0; j < 8; ++j) y[j] = scale * static_cast<float>(grid_byte(entry, j)) * sign_of(signs, j);
}

// 8 weights from two 4-level IQ3 grid entries.
inline void grid4x2_signed(float* y, float scale, uint32_t e1, uint32_t e2, uint8_t signs) {
    for (int j = 0; j < 4; ++j) {
        y[j] = scale * static_cast<float>(grid_byte(e1, j)) * sign_of(signs, j);
        y[j + 4] = scale * static_cast<float>(grid_byte(e2, j)) * sign_of(signs, j + 4);
    }
}

// 8 IQ1 weights: scale * (level + delta), level in {-1, 0, 1}.
inline void grid8_shifted(float* y, float scale, uint64_t entry, float delta) {
    for (int j = 0; j < 8; ++j)
        y[j] = scale * (static_cast<float>(static_cast<int8_t>(grid_byte(entry, j))) + delta);
}

}  // namespace

void dequantize_row_iq2_xxs(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq2_xxs*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        for (int ib = 0; ib < 8; ++ib) {
            uint32_t aux[2];
            std::memcpy(aux, x[i].qs + 4 * ib, 8);
            const float db = d * (0.5f + static_cast<float>(aux[1] >> 28)) * 0.25f;
            for (int l = 0; l < 4; ++l, y += 8)
                grid8_signed(y, db, kIq2xxsGrid[(aux[0] >> (8 * l)) & 255], iq_signs_from7(aux[1] >> (7 * l)));
        }
    }
}

void dequantize_row_iq2_xs(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq2_xs*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        for (int ib = 0; ib < 8; ++ib) {
            const float db[2] = {d * (0.5f + static_cast<float>(x[i].scales[ib] & 0xF)) * 0.25f,
                                 d * (0.5f + static_cast<float>(x[i].scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const uint16_t q = x[i].qs[4 * ib + l];
                grid8_signed(y, db[l / 2], kIq2xsGrid[q & 511], iq_signs_from7(q >> 9));
            }
        }
    }
}

void dequantize_row_iq2_s(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq2_s*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* qs = x[i].qs;
        const uint8_t* signs = x[i].qs + kQKK / 8;
        for (int ib = 0; ib < 8; ++ib, qs += 4, signs += 4) {
            const float db[2] = {d * (0.5f + static_cast<float>(x[i].scales[ib] & 0xF)) * 0.25f,
                                 d * (0.5f + static_cast<float>(x[i].scales[ib] >> 4)) * 0.25f};
            for (int l = 0; l < 4; ++l, y += 8) {
                const int index = qs[l] | ((x[i].qh[ib] << (8 - 2 * l)) & 0x300);
                grid8_signed(y, db[l / 2], kIq2sGrid[index], signs[l]);
            }
        }
    }
}

void dequantize_row_iq3_xxs(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq3_xxs*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* qs = x[i].qs;
        const uint8_t* scales_and_signs = x[i].qs + kQKK / 4;
        for (int ib = 0; ib < 8; ++ib, qs += 8) {
            uint32_t aux;
            std::memcpy(&aux, scales_and_signs + 4 * ib, 4);
            const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; ++l, y += 8)
                grid4x2_signed(y, db, kIq3xxsGrid[qs[2 * l]], kIq3xxsGrid[qs[2 * l + 1]], iq_signs_from7(aux >> (7 * l)));
        }
    }
}

void dequantize_row_iq3_s(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq3_s*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* qs = x[i].qs;
        const uint8_t* signs = x[i].signs;
        for (int ib = 0; ib < 8; ++ib, qs += 8, signs += 4) {
            const int scale = (x[i].scales[ib / 2] >> (4 * (ib % 2))) & 0xF;
            const float db = d * static_cast<float>(1 + 2 * scale);
            const int qh = x[i].qh[ib];
            for (int l = 0; l < 4; ++l, y += 8) {
                const int i1 = qs[2 * l] | ((qh << (8 - 2 * l)) & 256);
                const int i2 = qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
                grid4x2_signed(y, db, kIq3sGrid[i1], kIq3sGrid[i2], signs[l]);
            }
        }
    }
}

void dequantize_row_iq1_s(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq1_s*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* qs = x[i].qs;
        for (int ib = 0; ib < 8; ++ib, qs += 4) {
            const int qh = x[i].qh[ib];
            const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -kIq1Delta : kIq1Delta;
            for (int l = 0; l < 4; ++l, y += 8)
                grid8_shifted(y, dl, kIq1sGrid[qs[l] | (((qh >> (3 * l)) & 7) << 8)], delta);
        }
    }
}

void dequantize_row_iq1_m(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq1_m*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        uint16_t sc[4];
        std::memcpy(sc, x[i].scales, 8);
        const float d = fp16_to_f32(iq1m_d_bits(x[i]));
        const uint8_t* qs = x[i].qs;
        const uint8_t* qh = x[i].qh;
        for (int ib = 0; ib < 8; ++ib, qs += 4, qh += 2) {
            const int shift = 6 * (ib % 2);
            const float dl[2] = {d * static_cast<float>(2 * ((sc[ib / 2] >> shift) & 7) + 1),
                                 d * static_cast<float>(2 * ((sc[ib / 2] >> (shift + 3)) & 7) + 1)};
            for (int l = 0; l < 4; ++l, y += 8) {
                const int h = qh[l / 2] >> (4 * (l % 2));  // this group's nibble: 3 index bits, the shift sign
                const float delta = h & 0x08 ? -kIq1Delta : kIq1Delta;
                grid8_shifted(y, dl[l / 2], kIq1sGrid[qs[l] | ((h & 7) << 8)], delta);
            }
        }
    }
}

void dequantize_row_tq1_0(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_tq1_0*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        // qs: 32 bytes x 5 trits, then 16 bytes x 5 trits; qh: 4 bytes x 4 trits
        for (int k = 0; k < 5; ++k)
            for (int m = 0; m < 32; ++m) *y++ = static_cast<float>(tq1_trit(x[i].qs[m], k) - 1) * d;
        for (int k = 0; k < 5; ++k)
            for (int m = 32; m < 48; ++m) *y++ = static_cast<float>(tq1_trit(x[i].qs[m], k) - 1) * d;
        for (int k = 0; k < 4; ++k)
            for (int m = 0; m < 4; ++m) *y++ = static_cast<float>(tq1_trit(x[i].qh[m], k) - 1) * d;
    }
}

void dequantize_row_tq2_0(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_tq2_0*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQKK / 4; j += 32)
            for (int l = 0; l < 4; ++l)
                for (int m = 0; m < 32; ++m) *y++ = static_cast<float>(((x[i].qs[j + m] >> (2 * l)) & 3) - 1) * d;
    }
}

void dequantize_row_mxfp4(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_mxfp4*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = e8m0_to_f32_half(x[i].e);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>(kMxfp4Values[x[i].qs[j] & 0xF]) * d;
            y[j + kQK / 2] = static_cast<float>(kMxfp4Values[x[i].qs[j] >> 4]) * d;
        }
    }
}

}  // namespace pocket::kernels
