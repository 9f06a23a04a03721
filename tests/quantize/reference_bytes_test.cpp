// Tensor bytes against llama-quantize's: every type of shared/reference/f_quantize with and
// without the imatrix (xxh64 of each tensor, as llama-gguf-hash prints it), the legacy .dat
// imatrix, and the metadata llama-quantize adds.
#include "pocket/quantize.hpp"
#include "quantize_test_util.hpp"
#include "reference_cases.hpp"

#include <gtest/gtest.h>

using namespace pocket;

namespace {

const std::vector<test::FQuantizeCase>& cases() {
    static const auto c = test::f_quantize_cases();
    return c;
}

std::vector<size_t> indices() {
    std::vector<size_t> idx(std::max<size_t>(cases().size(), 1));
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    return idx;
}

// Quantizes synth-8l-f16.gguf and compares every tensor's hash; returns the mismatches.
size_t compare_with(const std::filesystem::path& hashes, const std::string& type, const std::string& imatrix_file,
                    const test::ScratchDir& dir, int n_threads = 2) {
    std::optional<Imatrix> imatrix;
    QuantizeOptions o{.n_threads = n_threads};
    if (!imatrix_file.empty()) {
        imatrix = load_imatrix((test::f_quantize_dir() / imatrix_file).string());
        o.imatrix = &*imatrix;
    }
    const auto out = dir / "out.gguf";
    quantize_model((test::f_quantize_dir() / "synth-8l-f16.gguf").string(), out.string(), *find_quant_file_type(type), o);
    const auto expected = test::read_hashes(hashes);
    const auto got = test::hashes_of(GgufFile::open(out.string()));
    EXPECT_EQ(got.size(), expected.size());
    size_t mismatches = 0;
    for (const auto& [name, hash] : expected) {
        const auto it = got.find(name);
        const std::string mine = it == got.end() ? "(missing)" : it->second;
        if (mine != hash) {
            ++mismatches;
            ADD_FAILURE() << type << " " << (name.empty() ? "(all tensor data)" : name) << ": " << mine << " != llama.cpp's " << hash;
        }
    }
    return mismatches;
}

class ReferenceBytes : public ::testing::TestWithParam<size_t> {};

}  // namespace

TEST_P(ReferenceBytes, EqualLlamaQuantize) {
    if (cases().empty()) GTEST_SKIP() << "shared reference data not found (set POCKET_SHARED)";
    const auto& c = cases()[GetParam()];
    test::ScratchDir dir;
    const size_t bad = compare_with(c.hashes, c.type, c.imatrix ? "synth-8l.imatrix.gguf" : "", dir);
    std::cout << "[ observed ] " << c.label() << ": " << (bad ? "bytes differ" : "bytes identical to llama-quantize's")
              << "\n";
}

INSTANTIATE_TEST_SUITE_P(FQuantize, ReferenceBytes, ::testing::ValuesIn(indices()), [](const auto& tp) {
    return cases().empty() ? std::string("shared_data_absent") : cases()[tp.param].label();
});

// The legacy .dat imatrix stores averaged values: different bytes, which llama.cpp's hashes pin down.
TEST(ReferenceBytesImatrix, LegacyDatFormat) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    EXPECT_EQ(compare_with(test::f_quantize_dir() / "synth-8l.Q4_K_M.imatrix-dat.xxh64.txt", "Q4_K_M", "synth-8l.imatrix.dat", dir), 0u);
}

// One thread or several: the same bytes.
TEST(ReferenceBytesImatrix, ThreadCountDoesNotMatter) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    EXPECT_EQ(compare_with(test::f_quantize_dir() / "synth-8l.Q4_K_S.imatrix.xxh64.txt", "Q4_K_S", "synth-8l.imatrix.gguf", dir, 1), 0u);
    EXPECT_EQ(compare_with(test::f_quantize_dir() / "synth-8l.Q4_K_S.imatrix.xxh64.txt", "Q4_K_S", "synth-8l.imatrix.gguf", dir, 3), 0u);
}

TEST(ReferenceBytesImatrix, MetadataAsLlamaQuantizeWritesIt) {
    POCKET_REQUIRE_SHARED(shared);
    test::ScratchDir dir;
    const std::string imatrix_path = (test::f_quantize_dir() / "synth-8l.imatrix.gguf").string();
    const Imatrix imatrix = load_imatrix(imatrix_path);
    const auto out = dir / "out.gguf";
    const std::string in = (test::f_quantize_dir() / "synth-8l-f16.gguf").string();
    quantize_model(in, out.string(), *find_quant_file_type("Q4_K_M"), {.imatrix = &imatrix});
    const GgufFile f = GgufFile::open(out.string());
    const GgufFile src = GgufFile::open(in);
    EXPECT_EQ(f.get<uint32_t>("general.file_type"), 15u);
    EXPECT_EQ(f.get<uint32_t>("general.quantization_version"), 2u);
    EXPECT_EQ(f.get<std::string>("quantize.imatrix.file"), imatrix_path.substr(0, 127));
    EXPECT_EQ(f.get<uint32_t>("quantize.imatrix.entries_count"), imatrix.values.size());
    EXPECT_EQ(f.get<uint32_t>("quantize.imatrix.chunks_count"), static_cast<uint32_t>(imatrix.chunk_count));
    if (!imatrix.datasets.empty()) {
        EXPECT_EQ(f.get<std::string>("quantize.imatrix.dataset"), imatrix.datasets[0]);
    }
    // Every other key is copied.
    for (const auto& kv : src.metadata()) EXPECT_NE(f.find(kv.key), nullptr) << kv.key;
    EXPECT_EQ(f.get_strings("tokenizer.ggml.tokens").size(), src.get_strings("tokenizer.ggml.tokens").size());
}

TEST(ReferenceBytesImatrix, BothFormatsHoldTheSameTensors) {
    POCKET_REQUIRE_SHARED(shared);
    const Imatrix g = load_imatrix((test::f_quantize_dir() / "synth-8l.imatrix.gguf").string());
    const Imatrix d = load_imatrix((test::f_quantize_dir() / "synth-8l.imatrix.dat").string());
    EXPECT_FALSE(g.legacy);
    EXPECT_TRUE(d.legacy);
    ASSERT_EQ(g.values.size(), d.values.size());
    for (const auto& [name, v] : g.values) {
        ASSERT_TRUE(d.values.count(name)) << name;
        EXPECT_EQ(d.values.at(name).size(), v.size()) << name;
    }
    EXPECT_GT(g.chunk_count, 0);
}
