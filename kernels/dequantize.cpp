// Row dequantization, the exact float expressions of ggml's to_float so results are
// bitwise equal (tested against llama.cpp's output in shared/reference/e_dequant).
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/row_functions.hpp"

#include <cstring>

namespace pocket::kernels {

void dequantize_row_q4_0(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q4_0*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>((x[i].qs[j] & 0xF) - 8) * d;
            y[j + kQK / 2] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_row_q4_1(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q4_1*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d), m = fp16_to_f32(x[i].m);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = static_cast<float>(x[i].qs[j] & 0xF) * d + m;
            y[j + kQK / 2] = static_cast<float>(x[i].qs[j] >> 4) * d + m;
        }
    }
}

void dequantize_row_q5_0(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q5_0*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, 4);
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = (x[i].qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
            const int hi = (x[i].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
            y[j] = static_cast<float>(lo - 16) * d;
            y[j + kQK / 2] = static_cast<float>(hi - 16) * d;
        }
    }
}

void dequantize_row_q5_1(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q5_1*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d), m = fp16_to_f32(x[i].m);
        uint32_t qh;
        std::memcpy(&qh, x[i].qh, 4);
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = (x[i].qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
            const int hi = (x[i].qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
            y[j] = static_cast<float>(lo) * d + m;
            y[j + kQK / 2] = static_cast<float>(hi) * d + m;
        }
    }
}

void dequantize_row_q8_0(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q8_0*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantize_row_q8_1(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q8_1*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[j] = static_cast<float>(x[i].qs[j]) * d;
    }
}

void dequantize_row_q2_K(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q2_K*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d), min = fp16_to_f32(x[i].dmin);
        const uint8_t* q = x[i].qs;
        int is = 0;
        for (int half128 = 0; half128 < 2; ++half128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; ++part) {  // 16 elements from q[0..15], then q[16..31]
                    const uint8_t sc = x[i].scales[is++];
                    const float dl = d * static_cast<float>(sc & 0xF), ml = min * static_cast<float>(sc >> 4);
                    for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
                }
            }
        }
    }
}

void dequantize_row_q3_K(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q3_K*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d_all = fp16_to_f32(x[i].d);
        const uint8_t* q = x[i].qs;
        const uint8_t* hm = x[i].hmask;
        uint8_t m = 1;
        int is = 0;
        for (int half128 = 0; half128 < 2; ++half128, q += 32) {
            for (int shift = 0; shift < 8; shift += 2, m = static_cast<uint8_t>(m << 1)) {
                for (int part = 0; part < 2; ++part) {
                    const float dl = d_all * static_cast<float>(q3k_scale(is++, x[i].scales));
                    for (int l = 0; l < 16; ++l) {
                        const int k = l + 16 * part;
                        const int v = ((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
                        *y++ = dl * static_cast<float>(v);
                    }
                }
            }
        }
    }
}

void dequantize_row_q4_K(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q4_K*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d), min = fp16_to_f32(x[i].dmin);
        const uint8_t* q = x[i].qs;
        for (int is = 0; is < 8; is += 2, q += 32) {
            uint8_t sc, m;
            k4_scale_min(is, x[i].scales, sc, m);
            const float d1 = d * sc, m1 = min * m;
            k4_scale_min(is + 1, x[i].scales, sc, m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
        }
    }
}

void dequantize_row_q5_K(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q5_K*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d), min = fp16_to_f32(x[i].dmin);
        const uint8_t* ql = x[i].qs;
        const uint8_t* qh = x[i].qh;
        uint8_t u1 = 1, u2 = 2;
        for (int is = 0; is < 8; is += 2, ql += 32) {
            uint8_t sc, m;
            k4_scale_min(is, x[i].scales, sc, m);
            const float d1 = d * sc, m1 = min * m;
            k4_scale_min(is + 1, x[i].scales, sc, m);
            const float d2 = d * sc, m2 = min * m;
            for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
            u1 = static_cast<uint8_t>(u1 << 2);
            u2 = static_cast<uint8_t>(u2 << 2);
        }
    }
}

void dequantize_row_q6_K(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q6_K*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        const int8_t* sc = x[i].scales;
        for (int half128 = 0; half128 < 2; ++half128, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                // (d * scale) * q, in this order, as ggml
                y[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
                y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
                y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
                y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
            }
        }
    }
}

void dequantize_row_q8_K(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_q8_K*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i)
        for (int j = 0; j < kQKK; ++j) *y++ = x[i].d * static_cast<float>(x[i].qs[j]);
}

void dequantize_row_iq4_nl(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq4_nl*>(vx);
    for (int64_t i = 0; i < n / kQK; ++i, y += kQK) {
        const float d = fp16_to_f32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[j] = d * static_cast<float>(kIq4nlValues[x[i].qs[j] & 0xF]);
            y[j + kQK / 2] = d * static_cast<float>(kIq4nlValues[x[i].qs[j] >> 4]);
        }
    }
}

void dequantize_row_iq4_xs(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const block_iq4_xs*>(vx);
    for (int64_t i = 0; i < n / kQKK; ++i) {
        const float d = fp16_to_f32(x[i].d);
        const uint8_t* qs = x[i].qs;
        for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
            const float dl = d * static_cast<float>(iq4xs_scale(ib, x[i]));
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * static_cast<float>(kIq4nlValues[qs[j] & 0xF]);
                y[j + 16] = dl * static_cast<float>(kIq4nlValues[qs[j] >> 4]);
            }
        }
    }
}

void dequantize_row_f16(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const half*>(vx);
    for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_f32(x[i]);
}

void dequantize_row_bf16(const void* vx, float* y, int64_t n) {
    const auto* x = static_cast<const bf16*>(vx);
    for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_f32(x[i]);
}

void dequantize_row_f32(const void* vx, float* y, int64_t n) {
    std::memcpy(y, vx, static_cast<size_t>(n) * sizeof(float));
}

}  // namespace pocket::kernels
