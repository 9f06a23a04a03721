// The scalar ISA's table: the reference dot products, GEMM by looping them.
#include "kernels/isa_table.hpp"
#include "kernels/row_functions.hpp"

namespace pocket::kernels {

void fill_scalar(IsaTable& t) {
#define POCKET_SET(G, f) t[GgmlType::G] = {scalar::vec_dot_##f, gemm_by_rows<scalar::vec_dot_##f>}
    POCKET_SET(F32, f32);
    POCKET_SET(F16, f16);
    POCKET_SET(BF16, bf16);
    POCKET_SET(Q4_0, q4_0);
    POCKET_SET(Q4_1, q4_1);
    POCKET_SET(Q5_0, q5_0);
    POCKET_SET(Q5_1, q5_1);
    POCKET_SET(Q8_0, q8_0);
    POCKET_SET(IQ4_NL, iq4_nl);
    POCKET_SET(Q2_K, q2_K);
    POCKET_SET(Q3_K, q3_K);
    POCKET_SET(Q4_K, q4_K);
    POCKET_SET(Q5_K, q5_K);
    POCKET_SET(Q6_K, q6_K);
    POCKET_SET(IQ4_XS, iq4_xs);
    POCKET_SET(MXFP4, mxfp4);
    POCKET_SET(IQ2_XXS, iq2_xxs);
    POCKET_SET(IQ2_XS, iq2_xs);
    POCKET_SET(IQ2_S, iq2_s);
    POCKET_SET(IQ3_XXS, iq3_xxs);
    POCKET_SET(IQ3_S, iq3_s);
    POCKET_SET(IQ1_S, iq1_s);
    POCKET_SET(IQ1_M, iq1_m);
    POCKET_SET(TQ1_0, tq1_0);
    POCKET_SET(TQ2_0, tq2_0);
#undef POCKET_SET
}

}  // namespace pocket::kernels
