// Kernel speed, per type and ISA:
//   dot/<type>/<isa>      matrix x vector (M = 1) over a weight matrix larger than the
//                         caches; bytes_per_second counts weight bytes read
//   gemv/<type>/<isa>     the same through gemm with m = 1 (row tiles share activations)
//   gemv_repacked/<type>/<isa>  the same on the load-time repacked layout (each type repack_kernels has)
//   gemm/<type>/<isa>/M   M activation rows at once; GFLOPS = 2 * n * rows * M / time
//   gemm_repacked/<type>/<isa>/M  the same on the repacked layout (prompt processing);
//                         POCKET_BENCH_N / POCKET_BENCH_ROWS set the gemm shape
//                         (POCKET_BENCH_DOT_KIB the M = 1 runs' weight bytes)
//   read_bandwidth        a STREAM-style read of a large buffer (the ceiling for dot)
// The M = 1 benchmarks and read_bandwidth run on 1 and 2 threads (/threads:N), each thread
// taking its share of the rows; they report the bytes of all threads together per wall time.
#include "kernels/kernels.hpp"

#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace pocket;
using namespace pocket::kernels;

// The gemm shape: rows of kN elements (POCKET_BENCH_N), kGemmRows of them (POCKET_BENCH_ROWS);
// a model's shapes (n = 2048, 2048 rows for a 1B) can behave unlike the default.
int64_t env_or(const char* name, int64_t fallback) {
    const char* v = std::getenv(name);
    return v && std::atoll(v) > 0 ? std::atoll(v) : fallback;
}
const int64_t kN = env_or("POCKET_BENCH_N", 4096);  // row length
const int64_t kGemmRows = env_or("POCKET_BENCH_ROWS", 256);
// Weights per matrix-vector run: well past any cache by default; POCKET_BENCH_DOT_KIB = 256
// keeps them in L2, which shows the kernel's compute rate apart from memory.
const size_t kDotBytes = static_cast<size_t>(env_or("POCKET_BENCH_DOT_KIB", 192 << 10)) << 10;

size_t row_bytes(GgmlType t, int64_t n) {
    for (const auto& r : kGgmlTypes)
        if (r.type == t) return static_cast<size_t>(n / r.block_size) * r.block_bytes;
    return 0;
}

// Rows of a matrix-vector benchmark: about kDotBytes of weights, a multiple of 64 rows.
int64_t dot_rows(GgmlType t) { return std::max<int64_t>(64, static_cast<int64_t>(kDotBytes / row_bytes(t, kN)) / 64 * 64); }

// Runs fn(first_row, end_row) on n threads, each taking its share of the rows as the matmul
// op splits them; the caller is one of them. Thread start-up (tens of microseconds) is small
// beside an iteration (milliseconds).
template <class Fn> void on_threads(int n, int64_t rows, Fn&& fn) {
    std::vector<std::thread> others;
    for (int i = 1; i < n; ++i) others.emplace_back([&, i] { fn(rows * i / n, rows * (i + 1) / n); });
    fn(0, rows / n);
    for (auto& t : others) t.join();
}


// Quantizes 16 random rows once and repeats them: K-quant reference quantization of a
// whole 4096 x 4096 matrix would dominate the start-up.
std::vector<uint8_t> weight_rows(GgmlType t, int64_t rows) {
    constexpr int64_t kDistinct = 16;
    std::mt19937 rng(1);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> f(static_cast<size_t>(kN * kDistinct));
    for (auto& v : f) v = g(rng);
    const size_t rb = row_bytes(t, kN);
    std::vector<uint8_t> distinct(rb * kDistinct), out(rb * static_cast<size_t>(rows));
    quantize_rows(t, f.data(), distinct.data(), kDistinct, kN);
    for (int64_t r = 0; r < rows; ++r)
        std::memcpy(&out[rb * static_cast<size_t>(r)], &distinct[rb * static_cast<size_t>(r % kDistinct)], rb);
    return out;
}

std::vector<uint8_t> activation_rows(GgmlType t, int64_t m) {
    const GgmlType at = type_kernels(t)->vec_dot_type;
    std::mt19937 rng(2);
    std::normal_distribution<float> g(0.f, 1.f);
    std::vector<float> f(static_cast<size_t>(kN));
    const size_t rb = row_bytes(at, kN);
    std::vector<uint8_t> out(rb * static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) {
        for (auto& v : f) v = g(rng);
        convert_activation_row(at, f.data(), &out[rb * static_cast<size_t>(j)], kN);
    }
    return out;
}

// state.range(0) threads; bytes_per_second counts the weight bytes of all of them.
void bench_dot(benchmark::State& state, GgmlType t, Isa isa) {
    set_active_isa(isa);
    const int64_t rows = dot_rows(t);
    const auto w = weight_rows(t, rows);
    const auto a = activation_rows(t, 1);
    const TypeKernels* k = type_kernels(t);
    const size_t rb = row_bytes(t, kN);
    std::vector<float> out(static_cast<size_t>(rows));
    for (auto _ : state) {
        on_threads(static_cast<int>(state.range(0)), rows, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) k->vec_dot(kN, &out[static_cast<size_t>(r)], &w[rb * static_cast<size_t>(r)], a.data());
        });
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.size()));
}

// The same matrix-vector product through gemm (m = 1): tiles share the activation row.
void bench_gemv(benchmark::State& state, GgmlType t, Isa isa) {
    set_active_isa(isa);
    const int64_t rows = dot_rows(t);
    const auto w = weight_rows(t, rows);
    const auto a = activation_rows(t, 1);
    const TypeKernels* k = type_kernels(t);
    const size_t rb = row_bytes(t, kN);
    std::vector<float> out(static_cast<size_t>(rows));
    for (auto _ : state) {
        on_threads(static_cast<int>(state.range(0)), rows, [&](int64_t r0, int64_t r1) {
            k->gemm(kN, &w[rb * static_cast<size_t>(r0)], rb, r1 - r0, a.data(), row_bytes(k->vec_dot_type, kN), 1,
                    &out[static_cast<size_t>(r0)], rows);
        });
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(w.size()));
}

// A packed copy as the model holds one: mapped with transparent huge pages requested (the CPU
// backend does the same). On 4 KiB pages the decoding kernels measured slower than in the
// model, and faster kernels did not show.
class HugeBytes {
public:
    static constexpr size_t kPage = size_t{2} << 20;
    explicit HugeBytes(size_t n) : n_((n + kPage - 1) / kPage * kPage) {
        void* p = ::mmap(nullptr, n_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) std::abort();
        ::madvise(p, n_, MADV_HUGEPAGE);
        p_ = static_cast<uint8_t*>(p);
    }
    HugeBytes(const HugeBytes&) = delete;
    HugeBytes& operator=(const HugeBytes&) = delete;
    ~HugeBytes() { ::munmap(p_, n_); }
    uint8_t* data() const { return p_; }

private:
    size_t n_;
    uint8_t* p_;
};

// Matrix x vector on the load-time repacked layout (8 rows interleaved).
void bench_gemv_repacked(benchmark::State& state, GgmlType t, Isa isa) {
    set_active_isa(isa);
    const RepackKernels* rk = repack_kernels(t);
    const int64_t rows = dot_rows(t);
    const int n = static_cast<int>(state.range(0));
    // One packed matrix per thread's share, as the loader packs whole tiles of rows.
    const auto w = weight_rows(t, rows / n);
    const auto a = activation_rows(t, 1);
    const size_t packed_bytes = rk->packed_bytes(rows / n, kN);
    std::vector<std::unique_ptr<HugeBytes>> packed;
    for (int i = 0; i < n; ++i) {
        packed.push_back(std::make_unique<HugeBytes>(packed_bytes));
        rk->pack(w.data(), row_bytes(t, kN), rows / n, kN, packed.back()->data());
    }
    std::vector<float> out(static_cast<size_t>(rows));
    for (auto _ : state) {
        on_threads(n, n, [&](int64_t i, int64_t) {
            rk->gemm(kN, packed[static_cast<size_t>(i)]->data(), rows / n, a.data(), row_bytes(type_kernels(t)->vec_dot_type, kN),
                     1, &out[static_cast<size_t>(i * (rows / n))], rows / n);
        });
        benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(packed_bytes) * n);
}

void bench_gemm(benchmark::State& state, GgmlType t, Isa isa, int64_t m) {
    set_active_isa(isa);
    const auto w = weight_rows(t, kGemmRows);
    const auto a = activation_rows(t, m);
    const TypeKernels* k = type_kernels(t);
    std::vector<float> c(static_cast<size_t>(kGemmRows * m));
    for (auto _ : state) {
        k->gemm(kN, w.data(), row_bytes(t, kN), kGemmRows, a.data(), row_bytes(k->vec_dot_type, kN), m, c.data(),
                kGemmRows);
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * kN * kGemmRows * static_cast<double>(m) * 1e-9 *
                                                      static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

void bench_gemm_repacked(benchmark::State& state, GgmlType t, Isa isa, int64_t m) {
    set_active_isa(isa);
    const RepackKernels* rk = repack_kernels(t);
    const auto w = weight_rows(t, kGemmRows);
    const auto a = activation_rows(t, m);
    std::vector<uint8_t> packed(rk->packed_bytes(kGemmRows, kN));
    rk->pack(w.data(), row_bytes(t, kN), kGemmRows, kN, packed.data());
    std::vector<float> c(static_cast<size_t>(kGemmRows * m));
    for (auto _ : state) {
        rk->gemm(kN, packed.data(), kGemmRows, a.data(), row_bytes(type_kernels(t)->vec_dot_type, kN), m, c.data(), kGemmRows);
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["GFLOPS"] = benchmark::Counter(2.0 * kN * kGemmRows * static_cast<double>(m) * 1e-9 *
                                                      static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

void bench_read_bandwidth(benchmark::State& state) {
    std::vector<uint64_t> buf(kDotBytes / 8, 1);
    std::vector<uint64_t> sums(2);
    for (auto _ : state) {
        on_threads(static_cast<int>(state.range(0)), static_cast<int64_t>(buf.size() / 4), [&](int64_t q0, int64_t q1) {
            uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (auto i = static_cast<size_t>(q0) * 4; i < static_cast<size_t>(q1) * 4; i += 4) {
                s0 += buf[i];
                s1 += buf[i + 1];
                s2 += buf[i + 2];
                s3 += buf[i + 3];
            }
            sums[q0 == 0 ? 0 : 1] = s0 + s1 + s2 + s3;
        });
        benchmark::DoNotOptimize(sums.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(buf.size() * 8));
}

const char* name_of(GgmlType t) {
    for (const auto& r : kGgmlTypes)
        if (r.type == t) return r.name.data();
    return "?";
}

}  // namespace

int main(int argc, char** argv) {
    const GgmlType dot_types[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,   GgmlType::Q4_1,
                                  GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0, GgmlType::IQ4_NL, GgmlType::Q2_K,
                                  GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,   GgmlType::IQ4_XS};
    const GgmlType gemm_types[] = {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K,
                                   GgmlType::Q5_K, GgmlType::F16,  GgmlType::F32};
    const GgmlType repacked_types[] = {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q2_K, GgmlType::Q3_K,
                                       GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS};
    benchmark::RegisterBenchmark("read_bandwidth", bench_read_bandwidth)->Unit(benchmark::kMillisecond)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avxvnni, Isa::avx512, Isa::neon}) {
        if (!isa_supported(isa)) continue;
        for (GgmlType t : dot_types)
            benchmark::RegisterBenchmark((std::string("dot/") + name_of(t) + "/" + isa_name(isa)).c_str(), bench_dot, t, isa)
                ->Unit(benchmark::kMillisecond)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
        set_active_isa(isa);
        for (GgmlType t : repacked_types)
            if (repack_kernels(t))
                benchmark::RegisterBenchmark((std::string("gemv_repacked/") + name_of(t) + "/" + isa_name(isa)).c_str(),
                                             bench_gemv_repacked, t, isa)
                    ->Unit(benchmark::kMillisecond)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
        for (GgmlType t : repacked_types)
            for (int64_t m : {32, 512})
                if (repack_kernels(t))
                    benchmark::RegisterBenchmark(
                        (std::string("gemm_repacked/") + name_of(t) + "/" + isa_name(isa) + "/" + std::to_string(m)).c_str(),
                        bench_gemm_repacked, t, isa, m)
                        ->Unit(benchmark::kMillisecond);
        for (GgmlType t : gemm_types)
            benchmark::RegisterBenchmark((std::string("gemv/") + name_of(t) + "/" + isa_name(isa)).c_str(), bench_gemv, t,
                                         isa)
                ->Unit(benchmark::kMillisecond)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
        for (GgmlType t : gemm_types)
            for (int64_t m : {8, 32, 512})
                benchmark::RegisterBenchmark(
                    (std::string("gemm/") + name_of(t) + "/" + isa_name(isa) + "/" + std::to_string(m)).c_str(),
                    bench_gemm, t, isa, m)
                    ->Unit(benchmark::kMillisecond);
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
