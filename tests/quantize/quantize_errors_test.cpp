// Refusals and failures: a clear one-line error naming the file, and never a file left
// behind (GgufWriter writes a temporary and renames it only once complete).
#include "kernels/kernels.hpp"
#include "pocket/error.hpp"
#include "pocket/gguf_writer.hpp"
#include "pocket/model.hpp"
#include "pocket/quantize.hpp"
#include "quantize_test_util.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

fs::path model_path(const fs::path& shared, const std::string& name) { return shared / "reference" / "models" / name; }

// Runs quantize_model and returns its error message ("" when it succeeded).
std::string quantize_error(const fs::path& in, const fs::path& out, const std::string& type, const QuantizeOptions& o = {}) {
    try {
        quantize_model(in.string(), out.string(), *find_quant_file_type(type), o);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void write_prefix(const fs::path& from, const fs::path& to, size_t n) {
    auto bytes = test::read_file(from);
    bytes.resize(std::min(n, bytes.size()));
    std::ofstream(to, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST(QuantizeErrors, TruncatedInput) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const auto in = dir / "truncated.gguf";
    for (size_t n : {size_t{10}, size_t{5000}, size_t{3000000}}) {
        write_prefix(model_path(shared, "rand-llama-f32.gguf"), in, n);
        const std::string err = quantize_error(in, dir / "out.gguf", "Q4_0");
        EXPECT_NE(err.find(in.string()), std::string::npos) << err;
        EXPECT_EQ(err.find('\n'), std::string::npos) << err;
        EXPECT_EQ(dir.n_entries(), 1u) << "only the input is there";
    }
}

TEST(QuantizeErrors, NotAGguf) {
    test::ScratchDir dir;
    const auto in = dir / "text.gguf";
    std::ofstream(in) << "this is not a model, just some text that is long enough to be read";
    const std::string err = quantize_error(in, dir / "out.gguf", "Q8_0");
    EXPECT_NE(err.find(in.string()), std::string::npos) << err;
    EXPECT_EQ(dir.n_entries(), 1u);
    EXPECT_NE(quantize_error(dir / "missing.gguf", dir / "out.gguf", "Q8_0").find("missing.gguf"), std::string::npos);
}

TEST(QuantizeErrors, RequantizeOnlyWhenAllowed) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const auto in = model_path(shared, "rand-llama-pure-q4_0.gguf");
    const std::string err = quantize_error(in, dir / "out.gguf", "Q8_0");
    EXPECT_NE(err.find("--allow-requantize"), std::string::npos) << err;
    EXPECT_NE(err.find(in.string()), std::string::npos) << err;
    EXPECT_EQ(dir.n_entries(), 0u);

    // Allowed: dequantized, then quantized; the result loads and is close to the source.
    ASSERT_EQ(quantize_error(in, dir / "out.gguf", "Q8_0", {.allow_requantize = true}), "");
    const GgufFile src = GgufFile::open(in.string()), out = GgufFile::open((dir / "out.gguf").string());
    const auto& a = src.tensor("blk.0.attn_q.weight");
    const auto& b = out.tensor("blk.0.attn_q.weight");
    EXPECT_EQ(b.type, GgmlType::Q8_0);
    std::vector<float> x(static_cast<size_t>(a.ne[0])), y(x.size());
    kernels::dequantize_row(a.type, a.data, x.data(), a.ne[0]);
    kernels::dequantize_row(b.type, b.data, y.data(), b.ne[0]);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], 0.01) << i;
    EXPECT_NO_THROW(Model::load((dir / "out.gguf").string()));
}

TEST(QuantizeErrors, CopyKeepsQuantizedTensorsWithoutTheFlag) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const auto in = model_path(shared, "rand-llama-mix-q4_k_m.gguf");
    ASSERT_EQ(quantize_error(in, dir / "out.gguf", "COPY"), "");
    const GgufFile src = GgufFile::open(in.string()), out = GgufFile::open((dir / "out.gguf").string());
    EXPECT_EQ(out.get<uint32_t>("general.file_type"), src.get<uint32_t>("general.file_type"));
    for (const auto& t : src.tensors()) {
        const auto& o = out.tensor(t.name);
        EXPECT_EQ(o.type, t.type);
        EXPECT_EQ(test::xxh64_hex(o.data, o.n_bytes), test::xxh64_hex(t.data, t.n_bytes)) << t.name;
    }
}

// A failure half-way through (a NaN in the second matrix) leaves neither the output nor
// the temporary behind.
TEST(QuantizeErrors, FailureMidWayLeavesNoFile) {
    test::ScratchDir dir;
    const auto in = dir / "nan.gguf";
    {
        GgufWriter w(in.string());
        w.set_string("general.architecture", "llama");
        w.set<uint32_t>("llama.block_count", 1);
        const int64_t ne[2] = {64, 8};
        w.add_tensor("token_embd.weight", GgmlType::F32, ne);
        w.add_tensor("blk.0.attn_q.weight", GgmlType::F32, ne);
        w.begin();
        std::vector<float> good(64 * 8, 0.5f), bad = good;
        bad[300] = std::numeric_limits<float>::quiet_NaN();
        w.write(good.data(), good.size() * sizeof(float));
        w.write(bad.data(), bad.size() * sizeof(float));
        w.finish();
    }
    const std::string err = quantize_error(in, dir / "out.gguf", "Q8_0");
    EXPECT_NE(err.find("NaN"), std::string::npos) << err;
    EXPECT_NE(err.find("blk.0.attn_q.weight"), std::string::npos) << err;
    EXPECT_EQ(dir.n_entries(), 1u) << "only the input is there";
}

TEST(QuantizeErrors, UnwritableOutputAndSameFile) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const auto in = model_path(shared, "rand-llama-f32.gguf");
    const std::string err = quantize_error(in, dir / "no" / "such" / "dir.gguf", "Q8_0");
    EXPECT_NE(err.find("dir.gguf"), std::string::npos) << err;
    EXPECT_EQ(dir.n_entries(), 0u);

    fs::copy_file(in, dir / "m.gguf");
    EXPECT_NE(quantize_error(dir / "m.gguf", dir / "m.gguf", "Q8_0").find("same file"), std::string::npos);
    EXPECT_EQ(fs::file_size(dir / "m.gguf"), fs::file_size(in));
}

// Rows that fit no block type: llama.cpp has no fallback for 32-block types and refuses.
TEST(QuantizeErrors, RowsNoTypeFits) {
    test::ScratchDir dir;
    const auto in = dir / "odd.gguf";
    {
        GgufWriter w(in.string());
        w.set_string("general.architecture", "llama");
        const int64_t ne[2] = {40, 4};
        w.add_tensor("blk.0.attn_q.weight", GgmlType::F32, ne);
        w.begin();
        std::vector<float> v(160, 0.25f);
        w.write(v.data(), v.size() * sizeof(float));
        w.finish();
    }
    const std::string err = quantize_error(in, dir / "out.gguf", "Q8_0");
    EXPECT_NE(err.find("blk.0.attn_q.weight"), std::string::npos) << err;
    EXPECT_NE(err.find("40"), std::string::npos) << err;
    EXPECT_EQ(dir.n_entries(), 1u);
    // K-quants fall back: 40 is not a multiple of 32 either, so F16.
    ASSERT_EQ(quantize_error(in, dir / "out.gguf", "Q4_K_M"), "");
    EXPECT_EQ(GgufFile::open((dir / "out.gguf").string()).tensor("blk.0.attn_q.weight").type, GgmlType::F16);
}

// ggml's names hold 63 characters: a longer one would make a file llama.cpp cannot load.
TEST(QuantizeErrors, TensorNameTooLongForLlamaCpp) {
    test::ScratchDir dir;
    const auto in = dir / "long.gguf";
    const std::string name = "blk.0." + std::string(60, 'x') + ".weight";
    {
        GgufWriter w(in.string());
        w.set_string("general.architecture", "llama");
        const int64_t ne[2] = {32, 2};
        w.add_tensor(name, GgmlType::F32, ne);
        w.begin();
        std::vector<float> v(64, 0.25f);
        w.write(v.data(), v.size() * sizeof(float));
        w.finish();
    }
    const std::string err = quantize_error(in, dir / "out.gguf", "Q8_0");
    EXPECT_NE(err.find(name), std::string::npos) << err;
    EXPECT_NE(err.find("at most 63"), std::string::npos) << err;
    EXPECT_EQ(dir.n_entries(), 1u) << "no output";
}
