#pragma once
// Internal: the row-interleaved Q4_0 layout. Eight rows' blocks b sit together in one
// 144-byte record: their eight scales, then their nibble bytes in four chunks of 4 bytes per
// row, qs[k][r] = row r's bytes 4k..4k+3. A 32-byte load then holds, in 32-bit lane r, four
// consecutive elements of row r (low nibbles: elements 4k.., high: 16+4k..), so one
// multiply-add against four activation bytes broadcast to every lane gives all eight rows'
// partial dots in their own lanes, with no horizontal sums. The same bytes as the eight
// original blocks, reordered.
#include "kernels/blocks.hpp"
#include "kernels/kernels.hpp"

#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pocket::kernels {

inline constexpr int kQ4_0x8Rows = 8;

struct block_q4_0x8 {
    half d[kQ4_0x8Rows];
    uint8_t qs[kQK / 8][kQ4_0x8Rows][4];  // [chunk k][row r][byte i] = row r's qs[4k + i]
};
static_assert(sizeof(block_q4_0x8) == kQ4_0x8Rows * sizeof(block_q4_0), "repacking must not change the size");

using PackedGemmFn = void (*)(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m,
                              float* c, size_t c_stride);

// The walk every pack shares: for each group of 8 rows and each block index b,
// place(out, blocks) fills record out from the eight rows' blocks b (blocks[r]: row r's).
// Records are stored group by group, block by block.
template <class In, class Out, class Place>
void interleave_blocks(const void* w, size_t w_stride, int64_t rows, int64_t blocks_per_row, Out* dst, Place place) {
    const auto* base = static_cast<const uint8_t*>(w);
    for (int64_t g = 0; g < rows / kQ4_0x8Rows; ++g) {
        const In* row[kQ4_0x8Rows];
        for (int r = 0; r < kQ4_0x8Rows; ++r)
            row[r] = reinterpret_cast<const In*>(base + w_stride * static_cast<size_t>(g * kQ4_0x8Rows + r));
        for (int64_t b = 0; b < blocks_per_row; ++b) {
            const In* blocks[kQ4_0x8Rows];
            for (int r = 0; r < kQ4_0x8Rows; ++r) blocks[r] = row[r] + b;
            place(dst[g * blocks_per_row + b], blocks);
        }
    }
}

// out[4 k + r] = dword k of row r, for Dwords dwords of 8 rows: the qs of a Q4_0 / Q8_0
// record. With SSE2 (every x86-64) in 4 x 4 dword transposes: the load-time repack of a
// 1 GB Q8_0 file spent most of its time here one dword at a time.
template <int Dwords>
inline void transpose_dwords(const uint8_t* const src[kQ4_0x8Rows], uint8_t* out) {
#if defined(__SSE2__)
    for (int k0 = 0; k0 < Dwords; k0 += 4) {
        for (int r0 = 0; r0 < kQ4_0x8Rows; r0 += 4) {
            __m128i a[4];
            for (int i = 0; i < 4; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[r0 + i] + 4 * k0));
            const __m128i t0 = _mm_unpacklo_epi32(a[0], a[1]), t1 = _mm_unpacklo_epi32(a[2], a[3]);
            const __m128i t2 = _mm_unpackhi_epi32(a[0], a[1]), t3 = _mm_unpackhi_epi32(a[2], a[3]);
            const __m128i col[4] = {_mm_unpacklo_epi64(t0, t1), _mm_unpackhi_epi64(t0, t1), _mm_unpacklo_epi64(t2, t3),
                                    _mm_unpackhi_epi64(t2, t3)};
            for (int i = 0; i < 4; ++i)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4 * (kQ4_0x8Rows * (k0 + i) + r0)), col[i]);
        }
    }
#else
    for (int k = 0; k < Dwords; ++k)
        for (int r = 0; r < kQ4_0x8Rows; ++r) std::memcpy(out + 4 * (kQ4_0x8Rows * k + r), src[r] + 4 * k, 4);
#endif
}

// The walk of the Q4_0 / Q8_0 packs: each record takes the eight rows' scales, then their
// qs transposed by dwords.
template <class In, class Out>
void interleave_dword_rows(const void* w, size_t w_stride, int64_t rows, int64_t blocks_per_row, Out* dst) {
    static_assert(sizeof(Out::qs) == kQ4_0x8Rows * sizeof(In::qs) && sizeof(In::qs) % 16 == 0);
    interleave_blocks<In>(w, w_stride, rows, blocks_per_row, dst, [](Out& out, const In* const* blocks) {
        const uint8_t* src[kQ4_0x8Rows];
        for (int r = 0; r < kQ4_0x8Rows; ++r) {
            out.d[r] = blocks[r]->d;
            src[r] = reinterpret_cast<const uint8_t*>(blocks[r]->qs);
        }
        transpose_dwords<sizeof(In::qs) / 4>(src, reinterpret_cast<uint8_t*>(out.qs));
    });
}

// Bytes of a matrix of 256-element super-block records R (8 rows each): rows / 8 groups of
// n / 256 records.
template <class R>
size_t superblock_records_bytes(int64_t rows, int64_t n) {
    return static_cast<size_t>(rows / kQ4_0x8Rows) * static_cast<size_t>(n / kQKK) * sizeof(R);
}

// The 12 scale bytes of a Q3_K / Q4_K / Q5_K block as three dwords of a record (dword t of the
// eight rows together), and back for row r.
inline void put_scales12(uint32_t (&scales)[3][kQ4_0x8Rows], int r, const uint8_t* bytes) {
    for (int t = 0; t < 3; ++t) std::memcpy(&scales[t][r], bytes + 4 * t, 4);
}
inline void get_scales12(const uint32_t (&scales)[3][kQ4_0x8Rows], int r, uint8_t* bytes) {
    for (int t = 0; t < 3; ++t) std::memcpy(bytes + 4 * t, &scales[t][r], 4);
}

// The scalar GEMMs' walk over super-block records R: C[j][8g + r] = row_dot(x, nb, y, r), the
// dot of row r of group g (records x[0..nb)) with activation row j (Q8_K blocks y[0..nb)).
template <class R, class RowDot>
void superblock_records_gemm(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                             size_t c_stride, RowDot row_dot) {
    const int64_t nb = n / kQKK;
    const auto* p = static_cast<const R*>(packed);
    for (int64_t j = 0; j < m; ++j) {
        const auto* y = reinterpret_cast<const block_q8_K*>(static_cast<const uint8_t*>(a) + a_stride * static_cast<size_t>(j));
        for (int64_t g = 0; g < rows / kQ4_0x8Rows; ++g)
            for (int r = 0; r < kQ4_0x8Rows; ++r)
                c[c_stride * static_cast<size_t>(j) + static_cast<size_t>(g * kQ4_0x8Rows + r)] = row_dot(p + g * nb, nb, y, r);
    }
}

size_t q4_0x8_packed_bytes(int64_t rows, int64_t n);
void q4_0x8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q4_0x8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved Q8_0 layout, as Q4_0's: eight rows' blocks b in one 272-byte record,
// their scales, then qs[k][r] = row r's qs[4k..4k+3] (elements 4k..4k+3).
struct block_q8_0x8 {
    half d[kQ4_0x8Rows];
    int8_t qs[kQK / 4][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_q8_0x8) == kQ4_0x8Rows * sizeof(block_q8_0), "repacking must not change the size");

size_t q8_0x8_packed_bytes(int64_t rows, int64_t n);
void q8_0x8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q8_0x8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved Q4_K layout: eight rows' super-blocks i in one 1152-byte record, the
// same bytes as the eight blocks, reordered. d and dmin of the eight rows; the 12 scale bytes
// of each row as three dwords, dword t of the eight rows together (so the six-bit scales and
// mins of eight rows unpack with a few vector ops); the nibbles in 4-byte chunks as for Q4_0:
// qs[k][r] = row r's qs[4k..4k+3], low nibbles elements 64(k/8) + 4(k%8).. of sub-block
// 2(k/8), high nibbles the same offsets 32 further (sub-block 2(k/8)+1). One multiply-add
// against four activation bytes broadcast to every lane gives eight rows' partial sums.
struct block_q4_Kx8 {
    half d[kQ4_0x8Rows];
    half dmin[kQ4_0x8Rows];
    uint32_t scales[3][kQ4_0x8Rows];
    uint8_t qs[kQKK / 8][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_q4_Kx8) == kQ4_0x8Rows * sizeof(block_q4_K), "repacking must not change the size");

size_t q4_Kx8_packed_bytes(int64_t rows, int64_t n);
void q4_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q4_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved Q5_K layout: Q4_K's record (d, dmin, the scale dwords, the nibbles in
// 4-byte chunks) with the fifth bits between the scales and the nibbles, in 4-byte chunks too:
// qh[c][r] = row r's qh[4c..4c+3], whose bit j is the fifth bit of element 32j + 4c + i; so
// nibble chunk k (sub-blocks 2(k/8), 2(k/8)+1) takes bits 2(k/8), 2(k/8)+1 of chunk k % 8.
struct block_q5_Kx8 {
    half d[kQ4_0x8Rows];
    half dmin[kQ4_0x8Rows];
    uint32_t scales[3][kQ4_0x8Rows];
    uint8_t qh[kQKK / 32][kQ4_0x8Rows][4];
    uint8_t qs[kQKK / 8][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_q5_Kx8) == kQ4_0x8Rows * sizeof(block_q5_K), "repacking must not change the size");

size_t q5_Kx8_packed_bytes(int64_t rows, int64_t n);
void q5_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q5_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved Q6_K layout: eight rows' super-blocks i in one 1680-byte record, the
// same bits as the eight blocks, rearranged. d of the eight rows; scale g of the eight rows
// together (8 bytes: one sign-extending load gives a vector its eight rows' scale); then the
// levels in 4-byte chunks, three per
// half h and l = 4c.. (q[8h + c][plane][r] = row r's bytes l..l+3 of that plane), each byte
// holding the levels of one element of each quarter (v_q = l_q + 16 h_q, 0..63) as
//   plane 0: l0 | h0 << 4 | h2 << 6    (v0 = byte & 0x3f)
//   plane 1: l1 | h1 << 4 | h3 << 6    (v1 = byte & 0x3f)
//   plane 2: l2 | l3 << 4              (v2, v3: a nibble here, bits 6-7 of plane 0 or 1)
// so that quarters 0 and 1 decode with one mask each and 2 and 3 with a nibble or-ed with two
// shifted bits, where ggml's ql / qh split needs that much work for every quarter.
struct block_q6_Kx8 {
    half d[kQ4_0x8Rows];
    int8_t scales[kQKK / 16][kQ4_0x8Rows];
    uint8_t q[kQKK / 16][3][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_q6_Kx8) == kQ4_0x8Rows * sizeof(block_q6_K), "repacking must not change the size");

size_t q6_Kx8_packed_bytes(int64_t rows, int64_t n);
void q6_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q6_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved Q2_K layout: eight rows' super-blocks i in one 672-byte record, the
// same bytes as the eight blocks, reordered. d and dmin of the eight rows; each row's 16
// scale bytes (low nibble: the scale of 16 elements, high: their min) as four dwords, dword t
// of the eight rows together; then qs in 4-byte chunks: qs[k][r] = row r's qs[4k..4k+3].
// Chunk 8h + c, shifted right by 2s, holds the levels of elements 128h + 32s + 4c.. (group
// 8h + 2s + c / 4).
struct block_q2_Kx8 {
    half d[kQ4_0x8Rows];
    half dmin[kQ4_0x8Rows];
    uint32_t scales[kQKK / 64][kQ4_0x8Rows];
    uint8_t qs[kQKK / 16][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_q2_Kx8) == kQ4_0x8Rows * sizeof(block_q2_K), "repacking must not change the size");

size_t q2_Kx8_packed_bytes(int64_t rows, int64_t n);
void q2_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q2_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved Q3_K layout: eight rows' super-blocks i in one 880-byte record, the
// same bytes as the eight blocks, reordered. d of the eight rows; each row's 12 scale bytes as
// three dwords, dword t of the eight rows together; then hmask and qs in 4-byte chunks:
// hmask[c][r] = row r's hmask[4c..4c+3], qs[k][r] = row r's qs[4k..4k+3]. Chunk 8h + c of qs,
// shifted right by 2s, holds the low two bits of elements 128h + 32s + 4c.. (group
// 8h + 2s + c / 4); bit 4h + s of hmask chunk c says which of them have no -4.
struct block_q3_Kx8 {
    half d[kQ4_0x8Rows];
    uint32_t scales[3][kQ4_0x8Rows];
    uint8_t hmask[kQKK / 32][kQ4_0x8Rows][4];
    uint8_t qs[kQKK / 16][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_q3_Kx8) == kQ4_0x8Rows * sizeof(block_q3_K), "repacking must not change the size");

size_t q3_Kx8_packed_bytes(int64_t rows, int64_t n);
void q3_Kx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void q3_Kx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                        size_t c_stride);

// The row-interleaved IQ4_XS layout: eight rows' super-blocks i in one 1088-byte record, the
// same bytes as the eight blocks, reordered. d of the eight rows; each row's scales_l (the low
// nibbles of its eight sub-block scales, nibble ib at bits 4ib) as one dword, dwords of the
// eight rows together; their scales_h (bits 2ib, 2ib+1: the scale's top two bits); then qs
// in 4-byte chunks as for Q4_0: qs[k][r] = row r's qs[4k..4k+3], so chunk 4ib + c holds
// elements 32ib + 4c.. (low nibbles) and 32ib + 16 + 4c.. (high nibbles) of sub-block ib, as
// indices into the 16 non-linear levels.
struct block_iq4_xsx8 {
    half d[kQ4_0x8Rows];
    uint32_t scales_l[kQ4_0x8Rows];
    uint16_t scales_h[kQ4_0x8Rows];
    uint8_t qs[kQKK / 8][kQ4_0x8Rows][4];
};
static_assert(sizeof(block_iq4_xsx8) == kQ4_0x8Rows * sizeof(block_iq4_xs), "repacking must not change the size");

size_t iq4_xsx8_packed_bytes(int64_t rows, int64_t n);
void iq4_xsx8_pack(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
void iq4_xsx8_gemm_scalar(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                          size_t c_stride);

// AMX (x86/amx_32.cpp, x86-64 builds only): whether this CPU and OS let pocket use the int8
// tiles (POCKET_AMX=0 says no), and Q8_0's and Q4_0's GEMMs on them for m a multiple of 16
// (their AVX-512 GEMMs call them).
bool amx_int8_usable();
void q8_0x8_gemm_amx(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                     size_t c_stride);
void q4_0x8_gemm_amx(int64_t n, const void* packed, int64_t rows, const void* a, size_t a_stride, int64_t m, float* c,
                     size_t c_stride);

#if defined(POCKET_KERNELS_X86)
PackedGemmFn q4_0x8_gemm_avx2();
PackedGemmFn q4_0x8_gemm_avx512();
PackedGemmFn q4_Kx8_gemm_avx2();
PackedGemmFn q8_0x8_gemm_avx2();
PackedGemmFn q8_0x8_gemm_avx512();
PackedGemmFn q4_Kx8_gemm_avx512();
PackedGemmFn q4_0x8_gemm_avxvnni();
PackedGemmFn q4_Kx8_gemm_avxvnni();
PackedGemmFn q5_Kx8_gemm_avx2();
PackedGemmFn q5_Kx8_gemm_avx512();
PackedGemmFn q5_Kx8_gemm_avxvnni();
PackedGemmFn q6_Kx8_gemm_avx2();
PackedGemmFn q6_Kx8_gemm_avx512();
PackedGemmFn q6_Kx8_gemm_avxvnni();
PackedGemmFn q8_0x8_gemm_avxvnni();
PackedGemmFn iq4_xsx8_gemm_avx2();
PackedGemmFn iq4_xsx8_gemm_avx512();
PackedGemmFn iq4_xsx8_gemm_avxvnni();
PackedGemmFn q2_Kx8_gemm_avx2();
PackedGemmFn q2_Kx8_gemm_avx512();
PackedGemmFn q2_Kx8_gemm_avxvnni();
PackedGemmFn q3_Kx8_gemm_avx2();
PackedGemmFn q3_Kx8_gemm_avx512();
PackedGemmFn q3_Kx8_gemm_avxvnni();
#endif

}  // namespace pocket::kernels
