// Chooses the ISA once and serves the per-type rows. The tables are built on first use and
// read-only afterwards; set_active_isa (tests only) swaps which one type_kernels() returns.
#include "kernels/isa_table.hpp"
#include "kernels/kernels.hpp"
#include "kernels/repack.hpp"
#include "kernels/row_functions.hpp"

#include <atomic>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string_view>

#if defined(POCKET_KERNELS_NEON)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#endif

namespace pocket::kernels {
namespace {

constexpr int kIsaCount = 5;

struct ConvRow {
    GgmlType type;
    GgmlType vec_dot_type;
    QuantizeRowFn quantize;
    DequantizeRowFn dequantize;
};

// The type rows: conversions, and the activation type each dot pairs with (as in ggml).
constexpr ConvRow kConv[] = {
    {GgmlType::F32, GgmlType::F32, quantize_row_f32, dequantize_row_f32},
    {GgmlType::F16, GgmlType::F16, quantize_row_f16, dequantize_row_f16},
    {GgmlType::BF16, GgmlType::BF16, quantize_row_bf16, dequantize_row_bf16},
    {GgmlType::Q4_0, GgmlType::Q8_0, quantize_row_q4_0, dequantize_row_q4_0},
    {GgmlType::Q4_1, GgmlType::Q8_1, quantize_row_q4_1, dequantize_row_q4_1},
    {GgmlType::Q5_0, GgmlType::Q8_0, quantize_row_q5_0, dequantize_row_q5_0},
    {GgmlType::Q5_1, GgmlType::Q8_1, quantize_row_q5_1, dequantize_row_q5_1},
    {GgmlType::Q8_0, GgmlType::Q8_0, quantize_row_q8_0, dequantize_row_q8_0},
    {GgmlType::Q8_1, GgmlType::Q8_1, quantize_row_q8_1, dequantize_row_q8_1},
    {GgmlType::Q2_K, GgmlType::Q8_K, quantize_row_q2_K, dequantize_row_q2_K},
    {GgmlType::Q3_K, GgmlType::Q8_K, quantize_row_q3_K, dequantize_row_q3_K},
    {GgmlType::Q4_K, GgmlType::Q8_K, quantize_row_q4_K, dequantize_row_q4_K},
    {GgmlType::Q5_K, GgmlType::Q8_K, quantize_row_q5_K, dequantize_row_q5_K},
    {GgmlType::Q6_K, GgmlType::Q8_K, quantize_row_q6_K, dequantize_row_q6_K},
    {GgmlType::Q8_K, GgmlType::Q8_K, quantize_row_q8_K, dequantize_row_q8_K},
    {GgmlType::IQ4_NL, GgmlType::Q8_0, quantize_row_iq4_nl, dequantize_row_iq4_nl},
    {GgmlType::IQ4_XS, GgmlType::Q8_K, quantize_row_iq4_xs, dequantize_row_iq4_xs},
    {GgmlType::IQ2_XXS, GgmlType::Q8_K, quantize_row_iq2_xxs, dequantize_row_iq2_xxs},
    {GgmlType::IQ2_XS, GgmlType::Q8_K, quantize_row_iq2_xs, dequantize_row_iq2_xs},
    {GgmlType::IQ2_S, GgmlType::Q8_K, quantize_row_iq2_s, dequantize_row_iq2_s},
    {GgmlType::IQ3_XXS, GgmlType::Q8_K, quantize_row_iq3_xxs, dequantize_row_iq3_xxs},
    {GgmlType::IQ3_S, GgmlType::Q8_K, quantize_row_iq3_s, dequantize_row_iq3_s},
    {GgmlType::IQ1_S, GgmlType::Q8_K, quantize_row_iq1_s, dequantize_row_iq1_s},
    {GgmlType::IQ1_M, GgmlType::Q8_K, quantize_row_iq1_m, dequantize_row_iq1_m},
    {GgmlType::TQ1_0, GgmlType::Q8_K, quantize_row_tq1_0, dequantize_row_tq1_0},
    {GgmlType::TQ2_0, GgmlType::Q8_K, quantize_row_tq2_0, dequantize_row_tq2_0},
    {GgmlType::MXFP4, GgmlType::Q8_0, quantize_row_mxfp4, dequantize_row_mxfp4},
};

#if defined(POCKET_KERNELS_X86)
// F16C by cpuid: clang 14's __builtin_cpu_supports does not know the name.
bool cpu_has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#endif

bool cpu_has(Isa isa) {
    switch (isa) {
        case Isa::scalar: return true;
#if defined(POCKET_KERNELS_X86)
        case Isa::avx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
        case Isa::avx512:
            return cpu_has(Isa::avx2) && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni");
        case Isa::avxvnni: {  // cpuid leaf 7 subleaf 1, EAX bit 4 (not every compiler's builtin knows it)
            unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
            return cpu_has(Isa::avx2) && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4)) != 0;
        }
#endif
#if defined(POCKET_KERNELS_NEON)
        case Isa::neon: return (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
#endif
        default: return false;
    }
}

// The types with a row-interleaved layout: its pack, its scalar GEMM, and the x86 GEMMs.
struct RepackType {
    GgmlType type;
    size_t (*packed_bytes)(int64_t rows, int64_t n);
    void (*pack)(const void* w, size_t w_stride, int64_t rows, int64_t n, void* dst);
    PackedGemmFn scalar;
#if defined(POCKET_KERNELS_X86)
    PackedGemmFn (*avx2)();
    PackedGemmFn (*avx512)();
    PackedGemmFn (*avxvnni)();
#endif
};
#if defined(POCKET_KERNELS_X86)
#define POCKET_REPACK(T, t) {GgmlType::T, t##_packed_bytes, t##_pack, t##_gemm_scalar, t##_gemm_avx2, t##_gemm_avx512, t##_gemm_avxvnni}
#else
#define POCKET_REPACK(T, t) {GgmlType::T, t##_packed_bytes, t##_pack, t##_gemm_scalar}
#endif
constexpr RepackType kRepackTypes[] = {POCKET_REPACK(Q4_0, q4_0x8), POCKET_REPACK(Q4_K, q4_Kx8), POCKET_REPACK(Q5_K, q5_Kx8),
                                       POCKET_REPACK(Q6_K, q6_Kx8), POCKET_REPACK(Q8_0, q8_0x8),
                                       POCKET_REPACK(IQ4_XS, iq4_xsx8), POCKET_REPACK(Q2_K, q2_Kx8),
                                       POCKET_REPACK(Q3_K, q3_Kx8)};
#undef POCKET_REPACK
constexpr int kRepackTypeCount = static_cast<int>(std::size(kRepackTypes));

struct Tables {
    TypeKernels rows[kIsaCount][kMaxTypeId];
    bool has_row[kMaxTypeId] = {};
    RepackKernels repack[kRepackTypeCount][kIsaCount];
    AttnKernels attn[kIsaCount];

    Tables() {
        IsaTable isa[kIsaCount];
        fill_scalar(isa[0]);
#if defined(POCKET_KERNELS_X86)
        isa[1] = isa[0];
        fill_avx2(isa[1]);
        isa[2] = isa[1];  // AVX-512 CPUs run the AVX2 kernels it does not replace
        fill_avx512(isa[2]);
        isa[4] = isa[1];  // AVX-VNNI CPUs run the AVX2 kernels it does not replace
        fill_avxvnni(isa[4]);
#endif
#if defined(POCKET_KERNELS_NEON)
        isa[3] = isa[0];
        fill_neon(isa[3]);
#endif
        for (int t = 0; t < kRepackTypeCount; ++t) {
            const RepackType& rt = kRepackTypes[t];
            PackedGemmFn gemm[kIsaCount] = {rt.scalar, rt.scalar, rt.scalar, rt.scalar, rt.scalar};
#if defined(POCKET_KERNELS_X86)
            gemm[1] = rt.avx2();
            gemm[2] = rt.avx512();
            gemm[4] = rt.avxvnni();
#endif
            for (int k = 0; k < kIsaCount; ++k) repack[t][k] = {kQ4_0x8Rows, rt.packed_bytes, rt.pack, gemm[k]};
        }
        for (auto& a : attn) a = attn_kernels_scalar();
#if defined(POCKET_KERNELS_X86)
        attn[1] = attn_kernels_avx2();
        attn[2] = attn_kernels_avx512();
        attn[4] = attn_kernels_avx2();
#endif
        for (int k = 0; k < kIsaCount; ++k) {
            for (const auto& c : kConv) {
                const int id = static_cast<int>(c.type);
                const DotEntry& e = isa[k].by_type[id];
                rows[k][id] = {c.type, c.vec_dot_type, c.quantize, c.dequantize, e.vec_dot, e.gemm};
                has_row[id] = true;
            }
        }
#if defined(POCKET_KERNELS_X86)
        rows[1][static_cast<int>(GgmlType::Q8_0)].quantize_row = quantize_q8_0_avx2();
        rows[2][static_cast<int>(GgmlType::Q8_0)].quantize_row = quantize_q8_0_avx512();
        rows[1][static_cast<int>(GgmlType::Q8_K)].quantize_row = quantize_q8_K_avx2();
        rows[2][static_cast<int>(GgmlType::Q8_K)].quantize_row = quantize_q8_K_avx512();
        rows[4][static_cast<int>(GgmlType::Q8_0)].quantize_row = quantize_q8_0_avxvnni();
        rows[4][static_cast<int>(GgmlType::Q8_K)].quantize_row = quantize_q8_K_avxvnni();
        for (int k : {1, 2, 4}) {
            rows[k][static_cast<int>(GgmlType::F16)].dequantize_row = dequantize_f16_f16c();
            rows[k][static_cast<int>(GgmlType::F16)].quantize_row = quantize_f16_f16c();
        }
#endif
    }
};

const Tables& tables() {
    static const Tables t;
    return t;
}

Isa best_isa() {
    for (Isa i : {Isa::avx512, Isa::avxvnni, Isa::avx2, Isa::neon})
        if (isa_supported(i)) return i;
    return Isa::scalar;
}

Isa initial_isa() {
    const Isa best = best_isa();
    const char* env = std::getenv("POCKET_ISA");
    if (!env || !*env) return best;
    for (Isa i : {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::neon}) {
        if (std::string_view(env) == isa_name(i)) {
            if (isa_supported(i)) return i;
            std::fprintf(stderr, "pocket: POCKET_ISA=%s is not supported by this CPU or build; using %s\n", env,
                         isa_name(best));
            return best;
        }
    }
    std::fprintf(stderr, "pocket: unknown POCKET_ISA=%s (scalar|avx2|avxvnni|avx512|neon); using %s\n", env, isa_name(best));
    return best;
}

std::atomic<int>& active_slot() {
    static std::atomic<int> slot{static_cast<int>(initial_isa())};
    return slot;
}

}  // namespace

bool isa_supported(Isa isa) {
#if !defined(POCKET_KERNELS_X86)
    if (isa == Isa::avx2 || isa == Isa::avx512 || isa == Isa::avxvnni) return false;
#endif
#if !defined(POCKET_KERNELS_NEON)
    if (isa == Isa::neon) return false;
#endif
    return cpu_has(isa);
}

const char* isa_name(Isa isa) {
    switch (isa) {
        case Isa::scalar: return "scalar";
        case Isa::avx2: return "avx2";
        case Isa::avx512: return "avx512";
        case Isa::avxvnni: return "avxvnni";
        case Isa::neon: return "neon";
    }
    return "?";
}

Isa active_isa() { return static_cast<Isa>(active_slot().load(std::memory_order_relaxed)); }

Isa set_active_isa(Isa isa) {
    if (!isa_supported(isa)) return active_isa();
    return static_cast<Isa>(active_slot().exchange(static_cast<int>(isa)));
}

const TypeKernels* type_kernels(GgmlType type) {
    const int id = static_cast<int>(type);
    if (id < 0 || id >= kMaxTypeId || !tables().has_row[id]) return nullptr;
    return &tables().rows[static_cast<int>(active_isa())][id];
}

const RepackKernels* repack_kernels(GgmlType type) {
    const int isa = static_cast<int>(active_isa());
    for (int t = 0; t < kRepackTypeCount; ++t)
        if (kRepackTypes[t].type == type) return &tables().repack[t][isa];
    return nullptr;
}

const AttnKernels* attn_kernels() { return &tables().attn[static_cast<int>(active_isa())]; }

}  // namespace pocket::kernels
