// IQ1_S / IQ1_M quantization, as llama-quantize runs it (ggml's quantize_iq1_s / _m with an
// importance matrix). Each weight is one of three levels (-1, 0, +1) plus a shift of
// +-kIq1Delta; 8 levels together must form one of the 2048 points of kIq1sGrid. Per group
// (IQ1_S: 32 weights, IQ1_M: 16) the best split of the sorted weights into the three
// levels is found exhaustively, then each 8 that is no grid point is replaced by its best
// nearby grid point. The float expressions follow ggml's one for one (no FMA contraction),
// so the bytes are llama.cpp's.
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
#include <initializer_list>
#include <vector>

namespace pocket::kernels {

using search::nearest_int;

namespace {

constexpr int kGridSize = 2048;
constexpr int kLevelKeys = 6561;  // 3^8: every combination of 8 levels
constexpr int kNeighbourDistances = 3;  // neighbours are the grid points at the 3 smallest distances

// Level (0, 1, 2 for -1, 0, +1) plus or minus the shift, indexed by level.
constexpr float kShiftedUp[3] = {-1 + kIq1Delta, kIq1Delta, 1 + kIq1Delta};
constexpr float kShiftedDown[3] = {-1 - kIq1Delta, -kIq1Delta, 1 - kIq1Delta};

// Below these maxima a group is stored as all zero (ggml's GROUP_MAX_EPS_IQ1_S / _M).
constexpr float kIq1sGroupMaxEps = 1e-12f;
constexpr float kIq1mGroupMaxEps = 1e-7f;

// Base-3 key of 8 levels, weight 0 the least significant digit.
int levels_key(const int8_t* L) {
    int key = 0;
    for (int j = 7; j >= 0; --j) key = 3 * key + L[j];
    return key;
}

// Which 8-level combinations are grid points, and for the others the grid points to try
// instead: those at the three smallest (squared level) distances, nearest first, then by
// index: the order of ggml's iq2xs_init_impl (its qsort compares (distance, index), a total
// order, so the order is unique). ggml scales levels to 2l+1, which multiplies every
// distance by 4 and changes no order.
class Iq1Codebook {
public:
    Iq1Codebook() {
        for (int g = 0; g < kGridSize; ++g)
            for (int j = 0; j < 8; ++j)
                levels_[g][j] = static_cast<int8_t>(static_cast<int8_t>(grid_byte(kIq1sGrid[g], j)) + 1);
        grid_of_.fill(-1);
        for (int g = 0; g < kGridSize; ++g) grid_of_[levels_key(levels_[g].data())] = static_cast<int16_t>(g);
        for (int key = 0; key < kLevelKeys; ++key)
            if (grid_of_[key] < 0) collect_neighbours(key);
    }

    // Level (0..2) of weight j in grid point g.
    int level(int g, int j) const { return levels_[g][j]; }
    const int8_t* levels(int g) const { return levels_[g].data(); }
    // The grid point with these levels, or -1.
    int grid_point(int key) const { return grid_of_[key]; }
    const uint16_t* neighbours_begin(int key) const { return neighbours_.data() + first_[key]; }
    const uint16_t* neighbours_end(int key) const { return neighbours_begin(key) + count_[key]; }

private:
    void collect_neighbours(int key) {
        int8_t want[8];
        for (int j = 0, k = key; j < 8; ++j, k /= 3) want[j] = static_cast<int8_t>(k % 3);
        std::array<uint8_t, kGridSize> dist;
        std::array<bool, 33> present{};  // squared distances are 0..32
        for (int g = 0; g < kGridSize; ++g) {
            int d2 = 0;
            for (int j = 0; j < 8; ++j) d2 += (levels_[g][j] - want[j]) * (levels_[g][j] - want[j]);
            dist[g] = static_cast<uint8_t>(d2);
            present[d2] = true;
        }
        first_[key] = static_cast<uint32_t>(neighbours_.size());
        int taken = 0;
        for (int d2 = 0; d2 <= 32 && taken < kNeighbourDistances; ++d2) {
            if (!present[d2]) continue;
            ++taken;
            for (int g = 0; g < kGridSize; ++g)
                if (dist[g] == d2) neighbours_.push_back(static_cast<uint16_t>(g));
        }
        count_[key] = static_cast<uint16_t>(neighbours_.size() - first_[key]);
    }

    std::array<std::array<int8_t, 8>, kGridSize> levels_{};
    std::array<int16_t, kLevelKeys> grid_of_{};
    std::array<uint32_t, kLevelKeys> first_{};
    std::array<uint16_t, kLevelKeys> count_{};
    std::vector<uint16_t> neighbours_;
};

// Built once, on first use, then shared read-only; C++ makes the first use thread-safe.
const Iq1Codebook& codebook() {
    static const Iq1Codebook book;
    return book;
}

// The rounding error's weights. With an importance matrix, ggml's qw * sqrt(sigma2 + x^2).
// Without one, x^2: ggml's own choice for IQ1_M (ggml refuses IQ1_S without an imatrix;
// pocket uses the same fallback there rather than fail).
void error_weights(const float* x, const float* qw, float sigma2, int n, float* weight) {
    if (qw)
        for (int i = 0; i < n; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + x[i] * x[i]);
    else
        for (int i = 0; i < n; ++i) weight[i] = x[i] * x[i];
}

float max_abs(const float* x, int n) {
    float m = std::fabs(x[0]);
    for (int i = 1; i < n; ++i) m = std::max(m, std::fabs(x[i]));
    return m;
}

// Indices 0..n-1 ordered by x, equal values keeping their order. ggml sorts with glibc's
// qsort, a merge sort (stable) for arrays this small, so ties land alike.
void sort_by_value(const float* x, int n, int* order) {
    for (int i = 0; i < n; ++i) {
        int j = i;
        while (j > 0 && x[order[j - 1]] > x[i]) {
            order[j] = order[j - 1];
            --j;
        }
        order[j] = i;
    }
}

// Levels from a split of the sorted order: below i1 -> 0, below i2 -> 1, the rest -> 2.
void levels_from_split(const int* order, int n, int i1, int i2, int8_t* L) {
    for (int j = 0; j < n; ++j) L[order[j]] = static_cast<int8_t>(j < i1 ? 0 : j < i2 ? 1 : 2);
}

// The grid point among `key`'s neighbours nearest to x (weighted) at this scale and shift;
// its levels go to L. ggml: iq1_find_best_neighbour2. (ggml asserts when no distance is
// finite, i.e. x is not; pocket then takes the first neighbour.)
int nearest_neighbour(const Iq1Codebook& book, int key, const float* x, const float* weight, float scale,
                      const float* shifted, int8_t* L) {
    float best = FLT_MAX;
    int best_g = *book.neighbours_begin(key);
    for (const uint16_t* p = book.neighbours_begin(key); p != book.neighbours_end(key); ++p) {
        float d2 = 0;
        for (int i = 0; i < 8; ++i) {
            const float diff = scale * shifted[book.level(*p, i)] - x[i];
            d2 += weight[i] * diff * diff;
        }
        if (d2 < best) {
            best = d2;
            best_g = *p;
        }
    }
    std::memcpy(L, book.levels(best_g), 8);
    return best_g;
}

// Grid indices of the 8-weight runs of a group of `n` levels; a run that is no grid point
// becomes its nearest neighbour (L updated). Returns whether every run was on the grid.
// `shifted_of(k)` is the shifted level table of run k.
template <class ShiftOf>
bool grid_indices(const float* x, const float* weight, int n, float scale, ShiftOf shifted_of, int8_t* L,
                  uint16_t* index) {
    const Iq1Codebook& book = codebook();
    bool all_on_grid = true;
    for (int k = 0; k < n / 8; ++k) {
        const int key = levels_key(L + 8 * k);
        int g = book.grid_point(key);
        if (g < 0) {
            all_on_grid = false;
            g = nearest_neighbour(book, key, x + 8 * k, weight + 8 * k, scale, shifted_of(k), L + 8 * k);
        }
        index[k] = static_cast<uint16_t>(g);
    }
    return all_on_grid;
}

// Least-squares scale of a group once its grid points are fixed; keeps `scale` unless the
// fit is positive.
template <class ShiftOf>
float refit_scale(const float* x, const float* weight, int n, const uint16_t* index, ShiftOf shifted_of, float scale) {
    const Iq1Codebook& book = codebook();
    float sumqx = 0, sumq2 = 0;
    for (int k = 0; k < n / 8; ++k) {
        const float* shifted = shifted_of(k);
        for (int j = 0; j < 8; ++j) {
            const float w = weight[8 * k + j];
            const float q = shifted[book.level(index[k], j)];
            sumqx += w * q * x[8 * k + j];
            sumq2 += w * q * q;
        }
    }
    return sumqx > 0 && sumq2 > 0 ? sumqx / sumq2 : scale;
}

// ---------------------------------------------------------------------------------- IQ1_S

constexpr int kIq1sGroup = 32;

struct GroupS {
    bool coded = false;  // false: left at zero (too small, or no usable split)
    float scale = 0;
    int shift = 1;  // +1: levels + delta, -1: levels - delta
    uint16_t index[kIq1sGroup / 8] = {};
};

// One 32-weight group. All 32 share one shift, so the scale of each split has a closed form
// from prefix sums over the sorted weights.
GroupS quantize_group_s(const float* x, const float* weight) {
    GroupS out;
    const float max = max_abs(x, kIq1sGroup);
    if (max < kIq1sGroupMaxEps) return out;

    int order[kIq1sGroup];
    sort_by_value(x, kIq1sGroup, order);
    float sumx[kIq1sGroup + 1], sumw[kIq1sGroup + 1];
    sumx[0] = sumw[0] = 0;
    for (int j = 0; j < kIq1sGroup; ++j) {
        const int i = order[j];
        sumx[j + 1] = sumx[j] + weight[i] * x[i];
        sumw[j + 1] = sumw[j] + weight[i];
    }

    // Maximizing sumqx^2 / sumq2 minimizes the weighted squared error at the best scale.
    constexpr int n = kIq1sGroup;
    float best = -FLT_MAX, scale = max;
    int best_i1 = -1, best_i2 = -1, best_shift = 0;
    for (int i1 = 0; i1 <= n; ++i1) {
        for (int i2 = i1; i2 <= n; ++i2) {
            for (int shift : {1, -1}) {
                const float* xs = shift == 1 ? kShiftedUp : kShiftedDown;
                const float sumqx =
                    (sumx[i1] - sumx[0]) * xs[0] + (sumx[i2] - sumx[i1]) * xs[1] + (sumx[n] - sumx[i2]) * xs[2];
                const float sumq2 = (sumw[i1] - sumw[0]) * xs[0] * xs[0] + (sumw[i2] - sumw[i1]) * xs[1] * xs[1] +
                                    (sumw[n] - sumw[i2]) * xs[2] * xs[2];
                if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
                    scale = sumqx / sumq2;
                    best = scale * sumqx;
                    best_i1 = i1;
                    best_i2 = i2;
                    best_shift = shift;
                }
            }
        }
    }
    if (best_i1 < 0 || best_i2 < 0 || best_shift == 0) return out;

    int8_t L[kIq1sGroup];
    levels_from_split(order, n, best_i1, best_i2, L);
    if (scale < 0) {  // a negative scale is the mirrored levels with the opposite shift
        for (int8_t& l : L) l = static_cast<int8_t>(2 - l);
        scale = -scale;
        best_shift = -best_shift;
    }
    const float* shifted = best_shift == 1 ? kShiftedUp : kShiftedDown;
    const auto shifted_of = [shifted](int) { return shifted; };
    if (!grid_indices(x, weight, n, scale, shifted_of, L, out.index))
        scale = refit_scale(x, weight, n, out.index, shifted_of, scale);
    out.coded = true;
    out.scale = scale;
    out.shift = best_shift;
    return out;
}

void quantize_superblock_s(const float* x, const float* qw, block_iq1_s& y) {
    y.d = f32_to_fp16(0.f);
    std::memset(y.qs, 0, sizeof y.qs);
    std::memset(y.qh, 0, sizeof y.qh);
    const float sigma2 = iq::superblock_sigma2(x, 2);
    float scales[kQKK / kIq1sGroup];
    int shifts[kQKK / kIq1sGroup];
    float max_scale = 0;
    for (int ib = 0; ib < kQKK / kIq1sGroup; ++ib) {
        const float* xb = x + kIq1sGroup * ib;
        float weight[kIq1sGroup];
        error_weights(xb, qw ? qw + kIq1sGroup * ib : nullptr, sigma2, kIq1sGroup, weight);
        const GroupS g = quantize_group_s(xb, weight);
        scales[ib] = g.scale;
        shifts[ib] = g.shift;
        if (!g.coded) continue;
        uint16_t high = 0;
        for (int k = 0; k < kIq1sGroup / 8; ++k) {
            y.qs[4 * ib + k] = static_cast<uint8_t>(g.index[k] & 255);
            high = static_cast<uint16_t>(high | ((g.index[k] >> 8) << (3 * k)));
        }
        y.qh[ib] = high;
        max_scale = std::max(max_scale, g.scale);
    }
    if (max_scale == 0) return;

    // Group scales become odd multiples 2l+1 of d, l in 0..7, d = max / 15.
    const float d = max_scale / 15;
    y.d = f32_to_fp16(d * 1.125f);  // ggml's empirical correction, needed for its bytes
    const float id = 1 / d;
    for (int ib = 0; ib < kQKK / kIq1sGroup; ++ib) {
        int l = std::clamp(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 7);
        if (shifts[ib] == -1) l |= 8;
        y.qh[ib] = static_cast<uint16_t>(y.qh[ib] | (l << 12));
    }
}

// ---------------------------------------------------------------------------------- IQ1_M

constexpr int kIq1mGroup = 16;

// IQ1_M shifts each 8 of a 16-weight group apart: combination c (0..3) shifts the first 8
// up when c < 2, the second 8 up when c is even.
const float* shifted_levels_m(int combination, int run) {
    const bool up = run == 0 ? combination < 2 : combination % 2 == 0;
    return up ? kShiftedUp : kShiftedDown;
}

struct GroupM {
    bool coded = false;
    float scale = 0;
    int combination = 0;
    uint16_t index[kIq1mGroup / 8] = {};
};

// One 16-weight group. The two halves may shift differently, so every split is summed
// afresh for all four shift combinations, in sorted order as ggml does.
GroupM quantize_group_m(const float* x, const float* weight) {
    GroupM out;
    const float max = max_abs(x, kIq1mGroup);
    if (max < kIq1mGroupMaxEps) return out;

    int order[kIq1mGroup];
    sort_by_value(x, kIq1mGroup, order);
    constexpr int n = kIq1mGroup;
    float best = -FLT_MAX, scale = max;
    int best_i1 = -1, best_i2 = -1, best_c = -1;
    for (int i1 = 0; i1 <= n; ++i1) {
        for (int i2 = i1; i2 <= n; ++i2) {
            float sumqx[4] = {}, sumq2[4] = {};
            for (int j = 0; j < n; ++j) {
                const int i = order[j];
                const int level = j < i1 ? 0 : j < i2 ? 1 : 2;
                for (int c = 0; c < 4; ++c) {
                    const float q = shifted_levels_m(c, i / 8)[level];
                    sumqx[c] += weight[i] * q * x[i];
                    sumq2[c] += weight[i] * q * q;
                }
            }
            for (int c = 0; c < 4; ++c) {
                if (sumq2[c] > 0 && sumqx[c] * sumqx[c] > best * sumq2[c]) {
                    scale = sumqx[c] / sumq2[c];
                    best = scale * sumqx[c];
                    best_i1 = i1;
                    best_i2 = i2;
                    best_c = c;
                }
            }
        }
    }
    if (best_i1 < 0 || best_i2 < 0 || best_c < 0) return out;

    int8_t L[kIq1mGroup];
    levels_from_split(order, n, best_i1, best_i2, L);
    if (scale < 0) {  // mirrored levels: both halves' shifts flip
        for (int8_t& l : L) l = static_cast<int8_t>(2 - l);
        scale = -scale;
        best_c = 3 - best_c;
    }
    const auto shifted_of = [best_c](int run) { return shifted_levels_m(best_c, run); };
    if (!grid_indices(x, weight, n, scale, shifted_of, L, out.index))
        scale = refit_scale(x, weight, n, out.index, shifted_of, scale);
    out.coded = true;
    out.scale = scale;
    out.combination = best_c;
    return out;
}

// The four 16-bit scale words: a 3-bit l per group, d's fp16 bits in the top nibbles.
void store_scale_words(block_iq1_m& y, const uint16_t* words) { std::memcpy(y.scales, words, sizeof y.scales); }

void quantize_superblock_m(const float* x, const float* qw, block_iq1_m& y) {
    std::memset(y.qs, 0, sizeof y.qs);
    std::memset(y.qh, 0, sizeof y.qh);
    std::memset(y.scales, 0, sizeof y.scales);
    const float sigma2 = iq::superblock_sigma2(x, 2);
    float scales[kQKK / kIq1mGroup];
    int combinations[kQKK / kIq1mGroup];
    float max_scale = 0;
    for (int ib = 0; ib < kQKK / kIq1mGroup; ++ib) {
        const float* xb = x + kIq1mGroup * ib;
        float weight[kIq1mGroup];
        error_weights(xb, qw ? qw + kIq1mGroup * ib : nullptr, sigma2, kIq1mGroup, weight);
        const GroupM g = quantize_group_m(xb, weight);
        scales[ib] = g.scale;
        combinations[ib] = g.combination;
        if (!g.coded) continue;
        y.qs[2 * ib + 0] = static_cast<uint8_t>(g.index[0] & 255);
        y.qs[2 * ib + 1] = static_cast<uint8_t>(g.index[1] & 255);
        y.qh[ib] = static_cast<uint8_t>((g.index[0] >> 8) | ((g.index[1] >> 8) << 4));
        max_scale = std::max(max_scale, g.scale);
    }
    if (max_scale == 0) return;

    // Group scales become 2l+1 times d; then d itself is refit by least squares over the
    // whole super-block as stored (groups left at zero included, as grid point 0).
    static constexpr uint8_t kShiftBits[4] = {0x00, 0x80, 0x08, 0x88};  // shift-down flag per run
    const Iq1Codebook& book = codebook();
    uint16_t words[4] = {};
    float d = max_scale / 15;
    const float id = 1 / d;
    float sumqx = 0, sumq2 = 0;
    for (int ib = 0; ib < kQKK / kIq1mGroup; ++ib) {
        const int l = std::clamp(nearest_int(0.5f * (id * scales[ib] - 1)), 0, 7);
        words[ib / 4] = static_cast<uint16_t>(words[ib / 4] | (l << (3 * (ib % 4))));
        y.qh[ib] = static_cast<uint8_t>(y.qh[ib] | kShiftBits[combinations[ib]]);
        const float* xb = x + kIq1mGroup * ib;
        float weight[kIq1mGroup];
        error_weights(xb, qw ? qw + kIq1mGroup * ib : nullptr, sigma2, kIq1mGroup, weight);
        for (int k = 0; k < 2; ++k) {
            const float* shifted = shifted_levels_m(combinations[ib], k);
            const int g = y.qs[2 * ib + k] | (((y.qh[ib] >> (4 * k)) & 7) << 8);
            for (int j = 0; j < 8; ++j) {
                const float w = weight[8 * k + j];
                const float q = shifted[book.level(g, j)] * static_cast<float>(2 * l + 1);
                sumqx += w * q * xb[8 * k + j];
                sumq2 += w * q * q;
            }
        }
    }
    if (sumq2 > 0) d = sumqx / sumq2;
    const uint16_t dh = f32_to_fp16(d * 1.1125f);  // ggml's empirical correction, needed for its bytes
    for (int w = 0; w < 4; ++w) words[w] = static_cast<uint16_t>(words[w] | (((dh >> (4 * w)) & 0xF) << 12));
    store_scale_words(y, words);
}

}  // namespace

void quantize_row_iq1_s(const float* src, void* dst, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_iq1_s*>(dst);
    for (int64_t i = 0; i < n / kQKK; ++i)
        quantize_superblock_s(src + kQKK * i, imatrix ? imatrix + kQKK * i : nullptr, y[i]);
}

void quantize_row_iq1_m(const float* src, void* dst, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_iq1_m*>(dst);
    for (int64_t i = 0; i < n / kQKK; ++i)
        quantize_superblock_m(src + kQKK * i, imatrix ? imatrix + kQKK * i : nullptr, y[i]);
}

}  // namespace pocket::kernels
