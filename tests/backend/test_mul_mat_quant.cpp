// mul_mat with quantized weights through the kernels: activations converted once to the
// weight's vec_dot_type, then every output element is exactly the kernels' vec_dot of that
// (weight row, activation row) pair, whichever path (vec_dot or gemm) and thread split ran.
// Built only when the kernels library exists.
#include "kernels/kernels.hpp"
#include "op_test_util.hpp"

namespace pocket::test {
namespace {

using GT = GgmlType;

TEST(MulMatQuant, EqualsKernelVecDotBitwiseAndApproximatesF32) {
    const GT types[] = {GT::F32, GT::F16, GT::BF16, GT::Q4_0, GT::Q4_1, GT::Q5_0, GT::Q5_1, GT::Q8_0,
                        GT::Q2_K, GT::Q3_K, GT::Q4_K, GT::Q5_K, GT::Q6_K, GT::IQ4_NL, GT::IQ4_XS};
    int tested = 0;
    for (GT type : types) {
        const kernels::TypeKernels* kt = kernels::type_kernels(type);
        if (!kt || !kt->vec_dot || !kt->quantize_row) continue;
        SCOPED_TRACE(ggml_type_info(type).name);
        ++tested;
        for (int64_t m : {1, 5}) {
            for (int n_threads : {1, 3}) {
                CpuRunner r(n_threads);
                const int64_t k = 512, n = 37;
                Tensor w = make_tensor(type, {k, n, 1, 1});
                auto buf = r.backend->alloc_buffer(w.nbytes());
                buf->place(w);
                const auto wf = random_floats(static_cast<size_t>(k * n), 31);
                kernels::quantize_rows(type, wf.data(), w.data, n, k);
                Graph g;
                Tensor* x = g.input("x", GT::F32, {k, m, 1, 1});
                Tensor* out = g.mul_mat(&w, x);
                g.mark_output(out);
                r.sched.allocate(g);
                fill_random(x, 32);
                r.sched.compute(g);

                const auto& act = ggml_type_info(kt->vec_dot_type);
                std::vector<uint8_t> a(static_cast<size_t>(k / act.block_size) * act.block_bytes);
                std::vector<float> wrow(static_cast<size_t>(k));
                for (int64_t j = 0; j < m; ++j) {
                    kernels::convert_activation_row(kt->vec_dot_type, static_cast<const float*>(x->element(0, j)), a.data(), k);
                    for (int64_t i = 0; i < n; ++i) {
                        float want;
                        kt->vec_dot(k, &want, static_cast<const uint8_t*>(w.data) + i * w.nb[1], a.data());
                        const float got = get_f32(*out, i, j);
                        ASSERT_EQ(std::memcmp(&got, &want, 4), 0) << "row " << i << " col " << j << ": " << got
                                                                  << " vs " << want;
                        // And close to the f32 product of the dequantized weights.
                        kernels::dequantize_row(type, static_cast<const uint8_t*>(w.data) + i * w.nb[1], wrow.data(), k);
                        double ref = 0, mag = 0;
                        for (int64_t c = 0; c < k; ++c) {
                            ref += double(wrow[c]) * get_f32(*x, c, j);
                            mag += std::fabs(double(wrow[c]) * get_f32(*x, c, j));
                        }
                        EXPECT_NEAR(got, ref, 0.02 * mag + 1e-4);
                    }
                }
            }
        }
    }
    EXPECT_GE(tested, 3);
}

}  // namespace
}  // namespace pocket::test
