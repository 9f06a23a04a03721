// IQ2_XXS / IQ2_XS / IQ2_S quantization as llama-quantize runs it: each group of 8 weights
// becomes one entry of a grid of 8-vectors with levels 1, 3, 5 (times a scale) and 8 signs.
// A rounding that misses the grid is replaced by the best of its nearest grid entries, so
// every search below works on grid points only. The float expressions follow ggml's order
// (the library is built without FMA contraction) so the bytes equal llama.cpp's.
#include "kernels/blocks.hpp"
#include "kernels/float16.hpp"
#include "kernels/iq_grids.hpp"
#include "kernels/quant_search.hpp"
#include "kernels/iq_quant_shared.hpp"
#include "kernels/row_functions.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace pocket::kernels {
namespace {

using search::nearest_int;

constexpr int kGroup = 8;        // weights per grid entry
constexpr int kLevelCount = 3;  // level indices 0..2 stand for 1, 3, 5 times the scale
constexpr int kMaxLevel = kLevelCount - 1;
constexpr int kOddMax = 2 * kMaxLevel + 1;  // the largest level value
// Codes pack a level index per weight in 2 bits (weight j at bits 2j); with every index
// at most 2 the largest is 0b1010...10.
constexpr int kCodeCount = 0xAAAA + 1;

// The lookup tables of one grid (ggml: iq2xs_init_impl): the grid's level indices, the grid
// index of each code on the grid, and for each code off it the grid entries nearest to it.
struct Iq2Codebook {
    std::vector<std::array<uint8_t, kGroup>> levels;
    // >= 0: the code's grid index; < 0: -(offset + 1) of its list in `neighbours`, which
    // holds the count and then the grid indices, nearest first, lower index first on ties.
    std::vector<int32_t> entry_of_code;
    std::vector<uint16_t> neighbours;
};

uint16_t code_of(const int8_t* L) {
    uint16_t u = 0;
    for (int i = 0; i < kGroup; ++i) u = static_cast<uint16_t>(u | (L[i] << (2 * i)));
    return u;
}

int level_index(uint8_t byte) { return byte == 0x08 ? 0 : byte == 0x19 ? 1 : 2; }

// Appends the neighbour list of `code` (level indices `pos`): every grid entry at one of
// the `rings` smallest distinct squared distances, by distance, then by index (the order
// ggml's qsort of (distance, index) pairs gives). Squared level-index distances order the
// entries as ggml's distances between values 2l+1 do (a factor of 4).
void append_neighbours(const Iq2Codebook& book, const std::array<uint8_t, kGroup>& pos, int rings,
                       std::vector<int>& dist, std::vector<uint16_t>& out) {
    const size_t grid_size = book.levels.size();
    for (size_t j = 0; j < grid_size; ++j) {
        int d2 = 0;
        for (int k = 0; k < kGroup; ++k) {
            const int d = book.levels[j][k] - pos[k];
            d2 += d * d;
        }
        dist[j] = d2;
    }
    const size_t count_at = out.size();
    out.push_back(0);
    int ring = -1;
    for (int r = 0; r < rings; ++r) {
        int next = std::numeric_limits<int>::max();
        for (size_t j = 0; j < grid_size; ++j)
            if (dist[j] > ring) next = std::min(next, dist[j]);
        if (next == std::numeric_limits<int>::max()) break;
        ring = next;
        for (size_t j = 0; j < grid_size; ++j)
            if (dist[j] == ring) out.push_back(static_cast<uint16_t>(j));
    }
    out[count_at] = static_cast<uint16_t>(out.size() - count_at - 1);
}

// `rings`: how many distinct distances the neighbour lists reach (ggml: 2 for IQ2_XXS and
// IQ2_XS, 1 for the denser IQ2_S grid).
Iq2Codebook build_codebook(std::span<const uint64_t> grid, int rings) {
    Iq2Codebook book;
    book.levels.resize(grid.size());
    // Codes with a 2-bit field of 3 never occur (levels are clamped to 0..2); they keep 0.
    book.entry_of_code.assign(kCodeCount, 0);
    std::vector<bool> on_grid(kCodeCount, false);
    for (size_t j = 0; j < grid.size(); ++j) {
        int8_t L[kGroup];
        for (int k = 0; k < kGroup; ++k) {
            L[k] = static_cast<int8_t>(level_index(grid_byte(grid[j], k)));
            book.levels[j][k] = static_cast<uint8_t>(L[k]);
        }
        book.entry_of_code[code_of(L)] = static_cast<int32_t>(j);
        on_grid[code_of(L)] = true;
    }
    std::vector<int> dist(grid.size());
    for (int u = 0; u < kCodeCount; ++u) {
        if (on_grid[static_cast<size_t>(u)]) continue;
        std::array<uint8_t, kGroup> pos{};
        bool valid = true;
        for (int k = 0; k < kGroup; ++k) {
            pos[k] = static_cast<uint8_t>((u >> (2 * k)) & 3);
            valid = valid && pos[k] <= kMaxLevel;
        }
        if (!valid) continue;
        book.entry_of_code[static_cast<size_t>(u)] = -static_cast<int32_t>(book.neighbours.size()) - 1;
        append_neighbours(book, pos, rings, dist, book.neighbours);
    }
    return book;
}

// Built on first use; the statics make that thread-safe.
const Iq2Codebook& iq2xxs_codebook() {
    static const Iq2Codebook book = build_codebook(kIq2xxsGrid, 2);
    return book;
}
const Iq2Codebook& iq2xs_codebook() {
    static const Iq2Codebook book = build_codebook(kIq2xsGrid, 2);
    return book;
}
const Iq2Codebook& iq2s_codebook() {
    static const Iq2Codebook book = build_codebook(kIq2sGrid, 1);
    return book;
}

// ggml's MAX(a, b), which keeps b when they compare equal (matters for signed zeros).

// Among the neighbours listed at `entry` (< 0), the grid entry whose values at `scale` are
// nearest to xval in the weighted sense; the first wins ties (ggml: iq2_find_best_neighbour).
int best_neighbour(const Iq2Codebook& book, int32_t entry, const float* xval, const float* w, float scale) {
    const uint16_t* list = book.neighbours.data() + (-entry - 1);
    float best_d2 = FLT_MAX;
    int best = list[1];
    for (int j = 1; j <= list[0]; ++j) {
        float d2 = 0;
        for (int i = 0; i < kGroup; ++i) {
            const float q = static_cast<float>(2 * book.levels[list[j]][i] + 1);
            const float diff = scale * q - xval[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = list[j];
        }
    }
    return best;
}

// Level indices of one group at inverse scale `id` (each weight rounded to the nearest of
// 1, 3, 5), moved to the best neighbouring grid entry at `scale` when that rounding is off
// the grid. Returns the grid index and whether the rounding was already on the grid.
struct GroupFit {
    int grid_index;
    bool was_on_grid;
};
GroupFit fit_group(const Iq2Codebook& book, const float* xval, const float* waux, float id, float scale, int8_t* L) {
    for (int i = 0; i < kGroup; ++i)
        L[i] = static_cast<int8_t>(std::clamp(nearest_int(0.5f * (id * xval[i] - 1)), 0, kMaxLevel));
    const int32_t entry = book.entry_of_code[code_of(L)];
    if (entry >= 0) return {entry, true};
    const int g = best_neighbour(book, entry, xval, waux, scale);
    for (int i = 0; i < kGroup; ++i) L[i] = static_cast<int8_t>(book.levels[static_cast<size_t>(g)][i]);
    return {g, false};
}

// Grid index of levels that fit_group produced (always on the grid).
int grid_index_of(const Iq2Codebook& book, const int8_t* L) { return book.entry_of_code[code_of(L)]; }

// Weighted least-squares terms of xval against the level values 2L+1.
struct LevelFit {
    float sumqx = 0, sumq2 = 0;
};
LevelFit weighted_fit(int n, const float* weight, const float* xval, const int8_t* L) {
    LevelFit f;
    for (int i = 0; i < n; ++i) {
        const float w = weight[i];
        const float q = static_cast<float>(2 * L[i] + 1);
        f.sumqx += w * xval[i] * q;
        f.sumq2 += w * q * q;
    }
    return f;
}

// Error weights of n values, and their square roots for the neighbour search. With an
// importance matrix: importance * sqrt(sigma2 + x^2). Without one ggml has a weighting for
// IQ2_S only (0.25 sigma2 + x^2) and refuses IQ2_XXS / IQ2_XS; pocket uses the same form for
// those two as well (not compared with llama.cpp: it cannot produce such files).
void error_weights(int n, const float* xb, const float* qw, float sigma2, float* weight, float* waux) {
    if (qw) {
        for (int i = 0; i < n; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < n; ++i) weight[i] = 0.25f * sigma2 + xb[i] * xb[i];
    }
    for (int i = 0; i < n; ++i) waux[i] = std::sqrt(weight[i]);
}

// IQ2_XS / IQ2_S, 16 weights with one scale: 19 trial scales around max/5, the best kept
// by weighted error; groups whose rounding missed the grid are then refitted at that scale.
// L receives the grid levels; returns the scale.
float search_scale16(const Iq2Codebook& book, const float* xval, const float* weight, const float* waux, float max,
                     int8_t* L) {
    constexpr int n = 2 * kGroup;
    int8_t Laux[n];
    bool on_grid[2] = {true, true}, on_grid_aux[2];
    std::memset(L, 0, n);
    float best = 0;
    float scale = max / kOddMax;
    for (int is = -9; is <= 9; ++is) {
        const float id = (kOddMax + static_cast<float>(is) * 0.1f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 2; ++k)
            on_grid_aux[k] = fit_group(book, xval + kGroup * k, waux + kGroup * k, id, this_scale, Laux + kGroup * k)
                                 .was_on_grid;
        const LevelFit f = weighted_fit(n, weight, xval, Laux);
        if (f.sumq2 > 0 && f.sumqx * f.sumqx > best * f.sumq2) {
            scale = f.sumqx / f.sumq2;
            best = scale * f.sumqx;
            std::memcpy(L, Laux, n);
            on_grid[0] = on_grid_aux[0];
            on_grid[1] = on_grid_aux[1];
        }
    }
    if ((!on_grid[0] || !on_grid[1]) && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 2; ++k)
            if (!on_grid[k]) fit_group(book, xval + kGroup * k, waux + kGroup * k, id, scale, L + kGroup * k);
        const LevelFit f = weighted_fit(n, weight, xval, L);
        if (f.sumq2 > 0) scale = f.sumqx / f.sumq2;
    }
    return scale;
}

// IQ2_XXS, 32 weights with one scale: starts from the weighted 4-level fit (ggml:
// make_qp_quants), tries 13 scales around it, then refits every group at the best one.
// nullopt when the start fit is empty (the group then stays all zero). L receives the
// grid levels.
std::optional<float> search_scale32(const Iq2Codebook& book, const float* xval, const float* weight,
                                    const float* waux, int8_t* L) {
    constexpr int n = 4 * kGroup;
    uint8_t start_levels[n];
    int8_t Laux[n];
    // ggml's start: levels 0..4 on 32 magnitudes; its largest used level value is 3 * scale
    float scale = search::positive_levels(n, kLevelCount + 1, xval, start_levels, weight);
    const float eff_max = scale * kLevelCount;
    // ggml's make_qp_quants returns 0 when every weight is 0; positive_levels gives NaN then.
    if (!(eff_max > 0)) return std::nullopt;
    std::memset(L, 0, n);
    float best = 0;
    for (int is = -6; is <= 6; ++is) {
        const float id = (kOddMax + static_cast<float>(is) * 0.1f) / eff_max;
        const float this_scale = 1 / id;
        for (int k = 0; k < 4; ++k)
            fit_group(book, xval + kGroup * k, waux + kGroup * k, id, this_scale, Laux + kGroup * k);
        const LevelFit f = weighted_fit(n, weight, xval, Laux);
        if (f.sumq2 > 0 && f.sumqx * f.sumqx > best * f.sumq2) {
            scale = f.sumqx / f.sumq2;
            best = scale * f.sumqx;
            std::memcpy(L, Laux, n);
        }
    }
    // scale > 0 here unless a trial won with a negative one, whose levels L then holds.
    if (scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < 4; ++k) fit_group(book, xval + kGroup * k, waux + kGroup * k, id, scale, L + kGroup * k);
        const LevelFit f = weighted_fit(n, weight, xval, L);
        if (f.sumq2 > 0) scale = f.sumqx / f.sumq2;
    }
    return scale;
}

// The 4-bit scale of each sub-block relative to max_scale / 31: value (2l+1) * d / 2.
int scale_nibble(float id, float scale) { return std::clamp(nearest_int(0.5f * (id * scale - 1)), 0, 15); }

void quantize_block_iq2_xxs(const Iq2Codebook& book, const float* xbl, const float* qwbl, block_iq2_xxs& y) {
    uint32_t q2[2 * kQKK / 32] = {};  // per 32: 4 grid bytes, then 4 x 7 sign bits and the scale
    float scales[kQKK / 32];
    float weight[32], waux[32], xval[32];
    int8_t L[32];
    uint8_t signs[4];
    const float sigma2 = iq::superblock_sigma2(xbl, 1.f);
    float max_scale = 0;
    for (int ib = 0; ib < kQKK / 32; ++ib) {
        const float* xb = xbl + 32 * ib;
        error_weights(32, xb, qwbl ? qwbl + 32 * ib : nullptr, sigma2, weight, waux);
        for (int k = 0; k < 4; ++k)
            signs[k] = iq::split_signs8(xb + kGroup * k, weight + kGroup * k, xval + kGroup * k, true);
        float max = xval[0];
        for (int i = 1; i < 32; ++i) max = iq::ggml_max(max, xval[i]);
        scales[ib] = 0;
        if (max < 1e-15f) continue;
        const std::optional<float> found = search_scale32(book, xval, weight, waux, L);
        if (!found) continue;
        float scale = *found;
        if (scale < 0) {  // should not happen; the stored scale is unsigned, so flip the signs
            scale = -scale;
            for (auto& s : signs) s = static_cast<uint8_t>(~s & 127);
        }
        for (int k = 0; k < 4; ++k) {
            q2[2 * ib] |= static_cast<uint32_t>(grid_index_of(book, L + kGroup * k)) << (8 * k);
            q2[2 * ib + 1] |= static_cast<uint32_t>(signs[k]) << (7 * k);
        }
        scales[ib] = scale;
        max_scale = iq::ggml_max(max_scale, scale);
    }
    y.d = f32_to_fp16(0.f);
    if (max_scale == 0) {
        std::memset(y.qs, 0, sizeof(y.qs));
        return;
    }
    const float d = max_scale / 31;
    y.d = f32_to_fp16(d);
    const float id = 1 / d;
    for (int ib = 0; ib < kQKK / 32; ++ib) q2[2 * ib + 1] |= static_cast<uint32_t>(scale_nibble(id, scales[ib])) << 28;
    std::memcpy(y.qs, q2, sizeof(y.qs));
}

// IQ2_XS and IQ2_S share the search per 16 weights and differ in signs, weights and
// packing; `put_group` stores group k of sub-block ib (grid index, sign bits).
template <class PutGroup>
float quantize_superblock16(const Iq2Codebook& book, const float* xbl, const float* qwbl, float sigma2,
                            bool even_parity, float eps, float* scales, PutGroup put_group) {
    float weight[16], waux[16], xval[16];
    int8_t L[16];
    uint8_t signs[2];
    float max_scale = 0;
    for (int ib = 0; ib < kQKK / 16; ++ib) {
        const float* xb = xbl + 16 * ib;
        error_weights(16, xb, qwbl ? qwbl + 16 * ib : nullptr, sigma2, weight, waux);
        for (int k = 0; k < 2; ++k)
            signs[k] = iq::split_signs8(xb + kGroup * k, weight + kGroup * k, xval + kGroup * k, even_parity);
        float max = xval[0];
        for (int i = 1; i < 16; ++i) max = iq::ggml_max(max, xval[i]);
        scales[ib] = 0;
        if (max < eps) continue;
        float scale = search_scale16(book, xval, weight, waux, max, L);
        if (scale < 0) {  // should not happen; the stored scale is unsigned, so flip the signs
            scale = -scale;
            for (auto& s : signs) s = static_cast<uint8_t>(even_parity ? ~s & 127 : ~s);
        }
        for (int k = 0; k < 2; ++k) put_group(ib, k, grid_index_of(book, L + kGroup * k), signs[k]);
        scales[ib] = scale;
        max_scale = iq::ggml_max(max_scale, scale);
    }
    return max_scale;
}

void pack_scale_nibbles(const float* scales, float id, uint8_t* out) {
    for (int ib = 0; ib < kQKK / 16; ++ib) {
        const int l = scale_nibble(id, scales[ib]);
        if (ib % 2 == 0) out[ib / 2] = static_cast<uint8_t>(l);
        else out[ib / 2] = static_cast<uint8_t>(out[ib / 2] | (l << 4));
    }
}

void quantize_block_iq2_xs(const Iq2Codebook& book, const float* xbl, const float* qwbl, block_iq2_xs& y) {
    uint16_t q2[kQKK / 8] = {};  // 9-bit grid index, 7 sign bits
    float scales[kQKK / 16];
    y.d = f32_to_fp16(0.f);
    std::memset(y.scales, 0, sizeof(y.scales));
    const float max_scale = quantize_superblock16(
        book, xbl, qwbl, iq::superblock_sigma2(xbl, 1.f), true, 1e-15f, scales,
        [&](int ib, int k, int grid_index, uint8_t signs) {
            q2[2 * ib + k] = static_cast<uint16_t>(grid_index | (signs << 9));
        });
    if (max_scale == 0) {
        std::memset(y.qs, 0, sizeof(y.qs));
        return;
    }
    const float d = max_scale / 31;
    y.d = f32_to_fp16(d);
    pack_scale_nibbles(scales, 1 / d, y.scales);
    std::memcpy(y.qs, q2, sizeof(y.qs));
}

void quantize_block_iq2_s(const Iq2Codebook& book, const float* xbl, const float* qwbl, block_iq2_s& y) {
    float scales[kQKK / 16];
    std::memset(&y, 0, sizeof(y));
    // IQ2_S stores all 8 signs and uses a larger zero threshold (ggml: GROUP_MAX_EPS_IQ2_S).
    const float max_scale = quantize_superblock16(
        book, xbl, qwbl, iq::superblock_sigma2(xbl, 2.f), false, 1e-8f, scales,
        [&](int ib, int k, int grid_index, uint8_t signs) {
            const int i8 = 2 * ib + k;
            y.qs[i8] = static_cast<uint8_t>(grid_index & 255);
            y.qh[i8 / 4] = static_cast<uint8_t>(y.qh[i8 / 4] | ((grid_index >> 8) << (2 * (i8 % 4))));
            y.qs[kQKK / 8 + i8] = signs;
        });
    if (max_scale == 0) return;  // grid bytes and signs stay as written, as in ggml
    const float d = max_scale / 31;
    // ggml stores d slightly reduced (0.9875) but derives the nibbles from the unreduced d.
    y.d = f32_to_fp16(d * 0.9875f);
    pack_scale_nibbles(scales, 1 / d, y.scales);
}

template <class Block, class QuantizeBlock>
void quantize_row_blocks(const float* x, void* vy, int64_t n, const float* imatrix, const Iq2Codebook& book,
                  QuantizeBlock quantize_block) {
    auto* y = static_cast<Block*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i)
        quantize_block(book, x + kQKK * i, imatrix ? imatrix + kQKK * i : nullptr, y[i]);
}

}  // namespace

void quantize_row_iq2_xxs(const float* x, void* vy, int64_t n, const float* imatrix) {
    quantize_row_blocks<block_iq2_xxs>(x, vy, n, imatrix, iq2xxs_codebook(), quantize_block_iq2_xxs);
}

void quantize_row_iq2_xs(const float* x, void* vy, int64_t n, const float* imatrix) {
    quantize_row_blocks<block_iq2_xs>(x, vy, n, imatrix, iq2xs_codebook(), quantize_block_iq2_xs);
}

void quantize_row_iq2_s(const float* x, void* vy, int64_t n, const float* imatrix) {
    quantize_row_blocks<block_iq2_s>(x, vy, n, imatrix, iq2s_codebook(), quantize_block_iq2_s);
}

}  // namespace pocket::kernels
