// The repacked GEMMs of the 32-element block types (Q8_0, Q4_0) on AMX tiles (Xeons since
// Sapphire Rapids), sixteen rows x sixteen columns per tile multiply of one block. B is
// sixteen rows' levels as signed bytes, row k of the tile holding each row's elements
// 4k..4k+3: two 8-row records side by side (Q8_0's qs[k][r] as they are, Q4_0's nibbles less
// 8), made once per pair of records into a 16-row buffer that every column passes over. A is
// sixteen activation rows' qs of block b, one tile row per column, gathered contiguous once
// per SameActivations scope. So TDPBSSD gives the exact integer dots of 16 columns x 16 rows
// of one block; the float steps then run in zmm registers (one per column, its 16 rows in the
// lanes) in dot_order.hpp's order: block b into lane b % 8, lane by lane, so that two blocks'
// sums never share a register; fold 4, 2, 1. The bits of the scalar GEMM. The caller takes
// the columns past the last sixteen (the zmm GEMM).
//
// The tile unit stores a 16-row C tile in about the time of a multiply (~4.5 ns here), and the
// sums must go through memory to reach the vector registers: 8-row tiles (one record as B)
// spent as long on stores as on products, 16-row ones halve both per multiply-add.
// GCC 12's avx512fintrin.h self-initialises "undefined" vectors (as in dot_avx512.cpp).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/dot_order.hpp"
#include "kernels/float16.hpp"
#include "kernels/repack.hpp"

#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

namespace pocket::kernels {

namespace {

// ldtilecfg's 64-byte operand (palette 1).
struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

constexpr int kTile = 16;  // columns and rows of a C tile
// Tile registers: C the sums (16 columns x 16 rows of int32), A the activations (16
// columns x one block's 32 bytes), B the rows' qs (8 dword rows x 16 rows' 4 bytes).
// Macros: GCC's tile intrinsics paste the register number into their assembly text.
#define POCKET_TILE_C 0
#define POCKET_TILE_A 1
#define POCKET_TILE_B 2

void configure_tiles() {
    TileConfig cfg;
    cfg.rows[POCKET_TILE_C] = kTile, cfg.colsb[POCKET_TILE_C] = kTile * 4;
    cfg.rows[POCKET_TILE_A] = kTile, cfg.colsb[POCKET_TILE_A] = kQK;
    cfg.rows[POCKET_TILE_B] = kQK / 4, cfg.colsb[POCKET_TILE_B] = kTile * 4;
    _tile_loadconfig(&cfg);
}

// Sixteen rows' block b: their scales and their qs as a B tile (qs[k][r]: row r's bytes 4k..).
struct alignas(64) Rows16 {
    float d[kTile];
    int8_t qs[kQK / 4][kTile][4];
};

// The two records' scales, rows 0-7 then 8-15 (x1 null: zero).
template <class Record>
void gather_scales(const Record& x0, const Record* x1, Rows16& o) {
    const __m128i d0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x0.d));
    const __m128i d1 = x1 ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(x1->d)) : _mm_setzero_si128();
    _mm512_store_ps(o.d, _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(d0), d1, 1)));
}

// Q8_0 records x0, x1 (x1 null: rows 8-15 zero) into nb Rows16.
void gather_rows16(int64_t nb, const block_q8_0x8* x0, const block_q8_0x8* x1, Rows16* out) {
    for (int64_t b = 0; b < nb; ++b) {
        Rows16& o = out[b];
        gather_scales(x0[b], x1 ? x1 + b : nullptr, o);
        for (int k = 0; k < kQK / 4; ++k) {
            std::memcpy(o.qs[k], x0[b].qs[k], sizeof x0[b].qs[k]);
            if (x1) std::memcpy(o.qs[k][kQ4_0x8Rows], x1[b].qs[k], sizeof x1[b].qs[k]);
            else std::memset(o.qs[k][kQ4_0x8Rows], 0, sizeof x0[b].qs[k]);
        }
    }
}

// Q4_0 records likewise: chunk k's low nibbles are elements 4k.. (tile row k), its high
// nibbles elements 16 + 4k.. (tile row 4 + k), each less 8.
void gather_rows16(int64_t nb, const block_q4_0x8* x0, const block_q4_0x8* x1, Rows16* out) {
    const __m512i low = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
    for (int64_t b = 0; b < nb; ++b) {
        Rows16& o = out[b];
        gather_scales(x0[b], x1 ? x1 + b : nullptr, o);
        for (int k = 0; k < kQK / 8; ++k) {
            const __m256i q0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x0[b].qs[k]));
            // rows 8-15 of a lone record: nibbles 8, levels 0
            const __m256i q1 = x1 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x1[b].qs[k])) : _mm256_set1_epi8(static_cast<char>(0x88));
            const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
            _mm512_store_si512(o.qs[k], _mm512_sub_epi8(_mm512_and_si512(q, low), eight));
            _mm512_store_si512(o.qs[4 + k], _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(q, 4), low), eight));
        }
    }
}

// Sixteen columns' block b: their qs as an A tile, one 32-byte row per column.
struct alignas(64) Columns16 {
    int8_t qs[kTile][kQK];
};

// Columns a[0..16) (stride as) into nb Columns16: from the activations' own rows, each
// tile load gathered 16 lines from L2 (21 ns a block; 12.5 contiguous).
void gather_columns16(int64_t nb, const uint8_t* a, size_t as, Columns16* out) {
    for (int t = 0; t < kTile; ++t) {
        const auto* y = reinterpret_cast<const block_q8_0*>(a + as * static_cast<size_t>(t));
        for (int64_t b = 0; b < nb; ++b) std::memcpy(out[b].qs[t], y[b].qs, kQK);
    }
}

// The 16 rows w[0..nb) against the 16 columns x[0..nb) whose block scales are dy[16 b + j]:
// c[cs * j + r] for column j and row r < `rows` (8 or 16).
void rows16_tile(int64_t nb, const Rows16* w, const Columns16* x, const float* dy, float* c, size_t cs, int rows) {
    // Lane by lane (blocks lane, lane + 8, ...: the 16 columns' sums of that lane in zmm
    // registers), kBatch blocks at a time: first their tile products, each stored as soon as
    // it is done, then their float steps, while the next batch's lines are fetched (the tile
    // loads wait for their data in order: from L2 they took longer than the products).
    constexpr int kBatch = 8;
    alignas(64) int32_t sums[kBatch][kTile][kTile];
    alignas(64) float lanes[kBlockLanes][kTile][kTile];
    // The batches in order: lane l's blocks l + 8 (kBatch i + q).
    const int64_t per_lane = (nb + kBlockLanes - 1) / kBlockLanes;
    const int64_t batches_per_lane = (per_lane + kBatch - 1) / kBatch;
    auto fetch = [&](int lane, int64_t batch) {
        for (int q = 0; q < kBatch; ++q) {
            const int64_t b = lane + kBlockLanes * (kBatch * batch + q);
            if (b >= nb) break;
            for (int l = 0; l < static_cast<int>(sizeof(Rows16)); l += 64) _mm_prefetch(reinterpret_cast<const char*>(w + b) + l, _MM_HINT_T0);
            for (int l = 0; l < static_cast<int>(sizeof(Columns16)); l += 64) _mm_prefetch(reinterpret_cast<const char*>(x + b) + l, _MM_HINT_T0);
        }
    };
    for (int lane = 0; lane < kBlockLanes; ++lane) {
        __m512 acc[kTile];
        for (__m512& v : acc) v = _mm512_setzero_ps();
        for (int64_t batch = 0; batch < batches_per_lane; ++batch) {
            const int64_t b0 = lane + kBlockLanes * kBatch * batch;
            int count = 0;
            for (; count < kBatch && b0 + kBlockLanes * count < nb; ++count) {
                const int64_t b = b0 + kBlockLanes * count;
                _tile_loadd(POCKET_TILE_A, x[b].qs, kQK);
                _tile_loadd(POCKET_TILE_B, w[b].qs, kTile * 4);
                _tile_zero(POCKET_TILE_C);
                _tile_dpbssd(POCKET_TILE_C, POCKET_TILE_A, POCKET_TILE_B);
                _tile_stored(POCKET_TILE_C, sums[count], kTile * 4);
            }
            if (batch + 1 < batches_per_lane) fetch(lane, batch + 1);
            else if (lane + 1 < kBlockLanes) fetch(lane + 1, 0);
            for (int q = 0; q < count; ++q) {
                const int64_t b = b0 + kBlockLanes * q;
                const __m512 dx = _mm512_load_ps(w[b].d);
                for (int j = 0; j < kTile; ++j) {
                    const __m512 d = _mm512_mul_ps(dx, _mm512_set1_ps(dy[kTile * b + j]));  // dx * dy
                    acc[j] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_load_si512(sums[q][j])), acc[j]);
                }
            }
        }
        for (int j = 0; j < kTile; ++j) _mm512_store_ps(lanes[lane][j], acc[j]);
    }
    for (int j = 0; j < kTile; ++j) {
        __m512 l[kBlockLanes];
        for (int k = 0; k < kBlockLanes; ++k) l[k] = _mm512_load_ps(lanes[k][j]);
        for (int h = kBlockLanes / 2; h >= 1; h /= 2)
            for (int k = 0; k < h; ++k) l[k] = _mm512_add_ps(l[k], l[k + h]);
        float* out = c + cs * static_cast<size_t>(j);
        if (rows == kTile) _mm512_storeu_ps(out, l[0]);
        else _mm256_storeu_ps(out, _mm512_castps512_ps256(l[0]));
    }
}

bool amx_permitted() {
    unsigned eax, ebx, ecx, edx;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if (!(edx & (1u << 24)) || !(edx & (1u << 25))) return false;  // AMX-TILE, AMX-INT8
    const char* env = std::getenv("POCKET_AMX");
    if (env && std::strcmp(env, "0") == 0) return false;
    // Linux hands out the tile registers' 8 KiB of state per process, on request.
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace

bool amx_int8_usable() {
    static const bool usable = amx_permitted();
    return usable;
}

namespace {

// The activations as tiles: every column's blocks (Columns16, 16 columns of a block
// together) and block scales as floats (16 columns of a block together), for m a multiple of
// 16. Worked out once per thread while a SameActivations scope vouches for the same rows
// (mul_mat's chunks of rows: 8 per thread, each a call), else afresh.
struct ColumnTiles {
    const Columns16* x;
    const float* dy;
};
ColumnTiles column_tiles(const uint8_t* a, size_t as, int64_t m, int64_t nb) {
    thread_local std::vector<Columns16> x;
    thread_local std::vector<float> dy;
    thread_local DerivedActivations derived;
    if (derived.reuse(a, as, m, nb)) return {x.data(), dy.data()};
    const int64_t chunks = m / kTile;
    x.resize(static_cast<size_t>(chunks * nb));
    dy.resize(static_cast<size_t>(chunks * nb * kTile));
    for (int64_t k = 0; k < chunks; ++k) {
        gather_columns16(nb, a + as * static_cast<size_t>(k * kTile), as, x.data() + k * nb);
        for (int t = 0; t < kTile; ++t) {
            const auto* y = reinterpret_cast<const block_q8_0*>(a + as * static_cast<size_t>(k * kTile + t));
            float* d = dy.data() + k * nb * kTile + t;
            for (int64_t b = 0; b < nb; ++b) d[kTile * b] = fp16_to_f32(y[b].d);
        }
    }
    return {x.data(), dy.data()};
}

template <class Record>
void gemm_amx(int64_t n, const void* packed, int64_t rows, const void* va, size_t as, int64_t m, float* c, size_t cs) {
    const int64_t nb = n / kQK, groups = rows / kQ4_0x8Rows, chunks = m / kTile;
    const auto* p = static_cast<const Record*>(packed);
    const ColumnTiles cols = column_tiles(static_cast<const uint8_t*>(va), as, m, nb);
    thread_local std::vector<Rows16> w;
    w.resize(static_cast<size_t>(nb));
    configure_tiles();
    // Columns in blocks (~512 KiB of tiles) that stay in L2 while every pair of records passes
    // over them; a pair's 16-row copy is made again for each block (a small cost beside the
    // block's tile products).
    const int64_t block_chunks = std::max<int64_t>(1, static_cast<int64_t>((size_t{512} << 10) / (sizeof(Columns16) * nb)));
    for (int64_t k0 = 0; k0 < chunks; k0 += block_chunks) {
        const int64_t k1 = std::min(chunks, k0 + block_chunks);
        for (int64_t g = 0; g < groups; g += 2) {
            const bool pair = g + 1 < groups;
            gather_rows16(nb, p + g * nb, pair ? p + (g + 1) * nb : nullptr, w.data());
            for (int64_t k = k0; k < k1; ++k)
                rows16_tile(nb, w.data(), cols.x + k * nb, cols.dy + k * nb * kTile,
                            c + cs * static_cast<size_t>(k * kTile) + g * kQ4_0x8Rows, cs, pair ? kTile : kQ4_0x8Rows);
        }
    }
    _tile_release();  // the tile state back to its initial, cheap-to-save state
}

}  // namespace

void q8_0x8_gemm_amx(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    gemm_amx<block_q8_0x8>(n, packed, rows, a, as, m, c, cs);
}
void q4_0x8_gemm_amx(int64_t n, const void* packed, int64_t rows, const void* a, size_t as, int64_t m, float* c, size_t cs) {
    gemm_amx<block_q4_0x8>(n, packed, rows, a, as, m, c, cs);
}

#undef POCKET_TILE_C
#undef POCKET_TILE_A
#undef POCKET_TILE_B

}  // namespace pocket::kernels
