// IQ3_XXS / IQ3_S quantization: groups of 4 weights snapped to a lattice of 256 (XXS) or 512
// (S) points of 8 levels each, with a per-32 scale search, as llama-quantize runs it.
// Byte-identical to ggml (quantize_iq3_xxs / quantize_iq3_s): same float expressions in the
// same order, same tie-breaking; the library is built without FMA contraction.
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
#include <utility>
#include <vector>

namespace pocket::kernels {
namespace {

constexpr int kLevels = 8;       // levels per weight: 3 bits of a 12-bit group code
constexpr int kCodes = 1 << 12;  // every combination of 4 levels
constexpr int kSub = 32;         // weights per scale
constexpr int kGroups = kSub / 4;

using iq::ggml_max;

// Group code: 3 bits per weight, weight 0 least significant (ggml's key into its map).
int group_code(const int8_t* L) {
    int code = 0;
    for (int i = 0; i < 4; ++i) code |= L[i] << (3 * i);
    return code;
}

// The lattice prepared for the search (ggml: iq3xs_init_impl). Each point stores its level
// indices 0..7; the value a level stands for during the search is 2*l + 1.
struct Lattice {
    std::vector<std::array<int8_t, 4>> levels;
    std::array<int16_t, kCodes> point_of;        // group code -> point, or -1 if off the lattice
    std::array<uint32_t, kCodes> neighbours_at;  // off-lattice code -> its list in `neighbours`
    std::vector<uint16_t> neighbours;            // per list: count, then points, nearest first
};

// Squared distance, in units of half a level step, between the odd values of a code and a point.
int distance2(const int8_t* code_levels, const std::array<int8_t, 4>& point) {
    int d2 = 0;
    for (int i = 0; i < 4; ++i) {
        const int diff = (2 * point[i] + 1) - (2 * code_levels[i] + 1);
        d2 += diff * diff;
    }
    return d2;
}

// The candidates for an off-lattice code: every point within the `shells` smallest distinct
// distances, ordered by (distance, point index) as ggml's qsort orders them, since the
// search keeps the first of equally good candidates.
void append_neighbours(Lattice& lat, int code, int shells) {
    int8_t code_levels[4];
    for (int i = 0; i < 4; ++i) code_levels[i] = static_cast<int8_t>((code >> (3 * i)) & 7);
    std::vector<std::pair<int, int>> by_distance(lat.levels.size());
    for (size_t j = 0; j < lat.levels.size(); ++j)
        by_distance[j] = {distance2(code_levels, lat.levels[j]), static_cast<int>(j)};
    std::sort(by_distance.begin(), by_distance.end());

    const size_t count_at = lat.neighbours.size();
    lat.neighbours_at[static_cast<size_t>(code)] = static_cast<uint32_t>(count_at);
    lat.neighbours.push_back(0);
    int shell = 1, shell_d2 = by_distance[0].first;
    for (const auto& [d2, j] : by_distance) {
        if (d2 > shell_d2) {
            if (shell == shells) break;
            shell_d2 = d2;
            ++shell;
        }
        lat.neighbours.push_back(static_cast<uint16_t>(j));
    }
    lat.neighbours[count_at] = static_cast<uint16_t>(lat.neighbours.size() - count_at - 1);
}

// `level_of` maps a grid byte (ggml's dequantization value) back to its level index.
template <size_t N>
Lattice build_lattice(const std::array<uint32_t, N>& grid, int (*level_of)(uint8_t), int shells) {
    Lattice lat;
    lat.levels.resize(N);
    lat.point_of.fill(-1);
    lat.neighbours_at.fill(0);
    for (size_t k = 0; k < N; ++k) {
        for (int i = 0; i < 4; ++i) lat.levels[k][static_cast<size_t>(i)] = static_cast<int8_t>(level_of(grid_byte(grid[k], i)));
        lat.point_of[static_cast<size_t>(group_code(lat.levels[k].data()))] = static_cast<int16_t>(k);
    }
    for (int code = 0; code < kCodes; ++code)
        if (lat.point_of[static_cast<size_t>(code)] < 0) append_neighbours(lat, code, shells);
    return lat;
}

// Built on first use; function-local statics make that thread-safe. ggml searches two
// distance shells for the 256-point grid and three for the sparser-per-shell 512 one.
const Lattice& lattice_xxs() {
    // IQ3_XXS bytes are 4, 12, ..., 52, then 62: byte / 8 recovers the level.
    static const Lattice lat = build_lattice(kIq3xxsGrid, [](uint8_t b) { return b / 8; }, 2);
    return lat;
}
const Lattice& lattice_s() {
    static const Lattice lat = build_lattice(kIq3sGrid, [](uint8_t b) { return (b - 1) / 2; }, 3);
    return lat;
}

// Among an off-lattice code's candidates, the point nearest (weights w) to xval at `scale`;
// writes its levels to L. ggml: iq3_find_best_neighbour.
int best_neighbour(const Lattice& lat, int code, const float* xval, const float* w, float scale, int8_t* L) {
    const uint16_t* list = lat.neighbours.data() + lat.neighbours_at[static_cast<size_t>(code)];
    float best_d2 = FLT_MAX;
    int best = list[1];  // lists are never empty; the first candidate also stands in for NaN input
    for (int j = 1; j <= list[0]; ++j) {
        const auto& p = lat.levels[list[j]];
        float d2 = 0;
        for (int i = 0; i < 4; ++i) {
            const float q = static_cast<float>(2 * p[static_cast<size_t>(i)] + 1);
            const float diff = scale * q - xval[i];
            d2 += w[i] * diff * diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best = list[j];
        }
    }
    std::memcpy(L, lat.levels[static_cast<size_t>(best)].data(), 4);
    return best;
}

// Levels 0..7 of the group nearest to xval at inverse scale id, before any lattice snapping.
int raw_group_code(const float* xval, float id, int8_t* L) {
    for (int i = 0; i < 4; ++i) {
        const int l = search::nearest_int(0.5f * (id * xval[i] - 1));
        L[i] = static_cast<int8_t>(std::max(0, std::min(kLevels - 1, l)));
    }
    return group_code(L);
}

void level_sums(const float* w, const float* xval, const int8_t* L, float& sumqx, float& sumq2) {
    sumqx = 0;
    sumq2 = 0;
    for (int i = 0; i < kSub; ++i) {
        const float q = static_cast<float>(2 * L[i] + 1);
        sumqx += w[i] * xval[i] * q;
        sumq2 += w[i] * q * q;
    }
}

// What differs between the two types' sub-block searches.
struct Rule {
    const Lattice& lattice;
    int steps;  // scale trials (15 + step/5) / max for step in -steps..steps
    // IQ3_XXS stores 7 sign bits per 8 weights, the eighth implied by an even count of minus
    // signs: an odd count is fixed by giving up the sign of the least important weight.
    bool even_signs;
    float zero_below;  // a sub-block whose largest |x| is below this is stored as zero
    // IQ3_S refines every group after the search (and counts a group as off-lattice until a
    // trial is accepted); IQ3_XXS only the groups the best trial had to snap.
    bool refine_all;
};

struct SubBlock {
    float scale = 0;
    uint16_t points[kGroups] = {};
    uint8_t signs[kGroups / 2] = {};  // bit i: weight i of 8 is negative (XXS: 7 bits)
};

// Signs of xb taken out into `signs`, magnitudes into xval (XXS: one may stay negative).
void split_signs(const Rule& rule, const float* xb, const float* weight, float* xval, uint8_t* signs) {
    for (int k = 0; k < kSub / 8; ++k) signs[k] = iq::split_signs8(xb + 8 * k, weight + 8 * k, xval + 8 * k, rule.even_signs);
}

// One 32-weight sub-block (qw: its importance weights or null). Returns false for a
// sub-block stored as zero, which ggml skips entirely (see pack_s).
bool quantize_sub_block(const Rule& rule, const float* xb, const float* qw, float sigma2, SubBlock& out) {
    const Lattice& lat = rule.lattice;
    float weight[kSub], waux[kSub], xval[kSub];
    int8_t L[kSub] = {}, Laux[kSub];
    bool on_grid[kGroups], on_grid_aux[kGroups];

    if (qw) {
        for (int i = 0; i < kSub; ++i) weight[i] = qw[i] * std::sqrt(sigma2 + xb[i] * xb[i]);
    } else {
        for (int i = 0; i < kSub; ++i) weight[i] = xb[i] * xb[i];
    }
    for (int i = 0; i < kSub; ++i) waux[i] = std::sqrt(weight[i]);
    split_signs(rule, xb, weight, xval, out.signs);

    float max = xval[0];
    for (int i = 1; i < kSub; ++i) max = ggml_max(max, xval[i]);
    if (max < rule.zero_below) return false;

    // Trial scales around max/15; the best by weighted least squares keeps its levels.
    float best = 0;
    float scale = max / (2 * kLevels - 1);
    std::fill(std::begin(on_grid), std::end(on_grid), !rule.refine_all);
    for (int is = -rule.steps; is <= rule.steps; ++is) {
        const float id = (2 * kLevels - 1 + static_cast<float>(is) * 0.2f) / max;
        const float this_scale = 1 / id;
        for (int k = 0; k < kGroups; ++k) {
            const int code = raw_group_code(xval + 4 * k, id, Laux + 4 * k);
            on_grid_aux[k] = lat.point_of[static_cast<size_t>(code)] >= 0;
            if (!on_grid_aux[k]) best_neighbour(lat, code, xval + 4 * k, waux + 4 * k, this_scale, Laux + 4 * k);
        }
        float sumqx, sumq2;
        level_sums(weight, xval, Laux, sumqx, sumq2);
        if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
            scale = sumqx / sumq2;
            best = scale * sumqx;
            std::copy(std::begin(Laux), std::end(Laux), L);
            std::copy(std::begin(on_grid_aux), std::end(on_grid_aux), on_grid);
        }
    }

    // Snapped groups were snapped at their trial's scale: redo them at the chosen one.
    const bool any_off = std::find(std::begin(on_grid), std::end(on_grid), false) != std::end(on_grid);
    if (any_off && scale > 0) {
        const float id = 1 / scale;
        for (int k = 0; k < kGroups; ++k) {
            if (!rule.refine_all && on_grid[k]) continue;
            int8_t raw[4];
            const int code = raw_group_code(xval + 4 * k, id, raw);
            int point = lat.point_of[static_cast<size_t>(code)];
            if (point < 0) point = best_neighbour(lat, code, xval + 4 * k, waux + 4 * k, scale, L + 4 * k);
            std::memcpy(L + 4 * k, lat.levels[static_cast<size_t>(point)].data(), 4);
        }
        float sumqx, sumq2;
        level_sums(weight, xval, L, sumqx, sumq2);
        if (sumq2 > 0) scale = sumqx / sumq2;
    }
    if (scale < 0) {  // ggml guards against it (scales are stored unsigned): flip the signs instead
        scale = -scale;
        for (auto& s : out.signs) s = static_cast<uint8_t>(rule.even_signs ? ~s & 127 : ~s);
    }
    // Every group of L is a lattice point by now.
    for (int k = 0; k < kGroups; ++k)
        out.points[k] = static_cast<uint16_t>(lat.point_of[static_cast<size_t>(group_code(L + 4 * k))]);
    out.scale = scale;
    return true;
}

// Super-block scale d = max/31 times a fudge factor; each sub-block keeps 4 bits l with
// scale ~ d*(2l+1).
int scale_code(float id, float scale) {
    return std::max(0, std::min(15, search::nearest_int(0.5f * (id * scale - 1))));
}

void quantize_block_xxs(const float* x, const float* qw, block_iq3_xxs& y) {
    const Rule rule{lattice_xxs(), 15, true, 1e-8f, false};
    std::memset(&y, 0, sizeof(y));
    const float sigma2 = iq::superblock_sigma2(x, 2);
    float scales[kQKK / kSub] = {};
    uint32_t scales_and_signs[kQKK / kSub] = {};
    float max_scale = 0;
    for (int ib = 0; ib < kQKK / kSub; ++ib) {
        SubBlock sb;
        if (!quantize_sub_block(rule, x + kSub * ib, qw ? qw + kSub * ib : nullptr, sigma2, sb)) continue;
        for (int k = 0; k < kGroups; ++k) y.qs[kGroups * ib + k] = static_cast<uint8_t>(sb.points[k]);
        for (int k = 0; k < kGroups / 2; ++k) scales_and_signs[ib] |= static_cast<uint32_t>(sb.signs[k]) << (7 * k);
        scales[ib] = sb.scale;
        max_scale = ggml_max(max_scale, sb.scale);
    }
    if (max_scale == 0) {  // nothing but zero sub-blocks: the whole block stays zero
        std::memset(&y, 0, sizeof(y));
        return;
    }
    const float d = max_scale / 31;
    y.d = f32_to_fp16(d * 1.0125f);  // ggml's fudge factor
    const float id = 1 / d;
    for (int ib = 0; ib < kQKK / kSub; ++ib) {
        scales_and_signs[ib] |= static_cast<uint32_t>(scale_code(id, scales[ib])) << 28;
        std::memcpy(y.qs + kQKK / 4 + 4 * ib, &scales_and_signs[ib], 4);  // little-endian, as ggml
    }
}

void quantize_block_s(const float* x, const float* qw, block_iq3_s& y) {
    const Rule rule{lattice_s(), 9, false, std::numeric_limits<float>::denorm_min(), true};  // zero: max == 0
    std::memset(&y, 0, sizeof(y));
    const float sigma2 = iq::superblock_sigma2(x, 2);
    float scales[kQKK / kSub] = {};
    float max_scale = 0;
    // ggml advances its qs / signs cursors only past sub-blocks it quantized, so after a zero
    // sub-block the later ones' indices and signs land one slot early (the high index bits
    // and the scales do not shift). Reproduced for identical bytes.
    uint8_t* qs = y.qs;
    uint8_t* signs = y.signs;
    for (int ib = 0; ib < kQKK / kSub; ++ib) {
        SubBlock sb;
        if (!quantize_sub_block(rule, x + kSub * ib, qw ? qw + kSub * ib : nullptr, sigma2, sb)) continue;
        for (int k = 0; k < kGroups; ++k) {
            qs[k] = static_cast<uint8_t>(sb.points[k] & 255);
            y.qh[ib] = static_cast<uint8_t>(y.qh[ib] | ((sb.points[k] >> 8) << k));
        }
        std::memcpy(signs, sb.signs, sizeof(sb.signs));
        qs += kGroups;
        signs += sizeof(sb.signs);
        scales[ib] = sb.scale;
        max_scale = ggml_max(max_scale, sb.scale);
    }
    if (max_scale == 0) return;
    const float d = max_scale / 31;
    y.d = f32_to_fp16(d * 1.033f);  // ggml's fudge factor
    const float id = 1 / d;
    for (int ib = 0; ib < kQKK / kSub; ib += 2)
        y.scales[ib / 2] = static_cast<uint8_t>(scale_code(id, scales[ib]) | (scale_code(id, scales[ib + 1]) << 4));
}

}  // namespace

void quantize_row_iq3_xxs(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_iq3_xxs*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i) quantize_block_xxs(x + i * kQKK, imatrix ? imatrix + i * kQKK : nullptr, y[i]);
}

void quantize_row_iq3_s(const float* x, void* vy, int64_t n, const float* imatrix) {
    auto* y = static_cast<block_iq3_s*>(vy);
    for (int64_t i = 0; i < n / kQKK; ++i) quantize_block_s(x + i * kQKK, imatrix ? imatrix + i * kQKK : nullptr, y[i]);
}

}  // namespace pocket::kernels
