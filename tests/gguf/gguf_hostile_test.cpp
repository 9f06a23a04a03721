// Hostile and damaged files: every one must give a pocket::Error whose one-line message
// names the file and the problem, and never a crash, a hang or a huge allocation.
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace pocket;

namespace {

// Builds GGUF bytes by hand, so that each test can break exactly one thing.
struct Bytes {
    std::vector<uint8_t> b;
    template <class T> Bytes& put(T v) {
        const size_t at = b.size();
        b.resize(at + sizeof(T));
        std::memcpy(b.data() + at, &v, sizeof(T));
        return *this;
    }
    Bytes& str(std::string_view s) {
        put<uint64_t>(s.size());
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes& magic(const char* m) {
        b.insert(b.end(), m, m + 4);
        return *this;
    }
    Bytes& header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
        return magic("GGUF").put<uint32_t>(version).put<uint64_t>(n_tensors).put<uint64_t>(n_kv);
    }
    Bytes& kv_u32(std::string_view key, uint32_t v) { return str(key).put<uint32_t>(4).put<uint32_t>(v); }
    Bytes& tensor(std::string_view name, std::vector<int64_t> ne, uint32_t type, uint64_t offset) {
        str(name).put<uint32_t>(static_cast<uint32_t>(ne.size()));
        for (auto n : ne) put<int64_t>(n);
        return put<uint32_t>(type).put<uint64_t>(offset);
    }
    Bytes& pad(size_t a = 32) {
        b.resize((b.size() + a - 1) / a * a, 0);
        return *this;
    }
    Bytes& zeros(size_t n) {
        b.resize(b.size() + n, 0);
        return *this;
    }
};

// A small valid file: two metadata keys, two f32 tensors of 8 and 16 floats (both whole
// multiples of the alignment, so that no truncation can remove only padding).
std::vector<uint8_t> valid_file() {
    Bytes f;
    f.header(3, 2, 2).kv_u32("general.alignment", 32);
    f.str("general.name").put<uint32_t>(8).str("tiny");
    f.tensor("a", {8}, 0, 0).tensor("b", {4, 4}, 0, 32).pad().zeros(32 + 64);
    return f.b;
}

std::string error_of(const std::vector<uint8_t>& bytes, const std::string& name = "hostile.gguf") {
    try {
        GgufFile::from_memory(bytes.data(), bytes.size(), name);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void expect_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
    const std::string msg = error_of(bytes);
    ASSERT_FALSE(msg.empty()) << "accepted a file that should fail with: " << fragment;
    EXPECT_NE(msg.find("hostile.gguf"), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
}

}  // namespace

TEST(GgufHostile, ValidFileParses) {
    const auto f = valid_file();
    const GgufFile g = GgufFile::from_memory(f.data(), f.size(), "ok.gguf");
    EXPECT_EQ(g.tensors().size(), 2u);
    EXPECT_EQ(g.get<std::string_view>("general.name"), "tiny");
}

TEST(GgufHostile, EveryTruncationFails) {
    const auto f = valid_file();
    for (size_t n = 0; n < f.size(); ++n) {
        const std::vector<uint8_t> cut(f.begin(), f.begin() + static_cast<ptrdiff_t>(n));
        const std::string msg = error_of(cut);
        ASSERT_FALSE(msg.empty()) << "truncated to " << n << " bytes and accepted";
        EXPECT_NE(msg.find("truncated"), std::string::npos) << n << ": " << msg;
    }
}

TEST(GgufHostile, OldAndForeignFormats) {
    expect_error(Bytes{}.magic("lmgg").zeros(64).b, "old GGML format");
    expect_error(Bytes{}.magic("fmgg").zeros(64).b, "old GGMF format");
    expect_error(Bytes{}.magic("tjgg").zeros(64).b, "old GGJT format");
    EXPECT_NE(error_of(Bytes{}.magic("tjgg").zeros(64).b).find("convert"), std::string::npos);
    expect_error(Bytes{}.magic("PK\x03\x04").zeros(64).b, "not a GGUF file");
    expect_error(Bytes{}.header(1, 0, 0).b, "GGUF v1");
    expect_error(Bytes{}.header(7, 0, 0).b, "unsupported GGUF version 7");
    // A big-endian v3 file: the version's bytes are 00 00 00 03.
    expect_error(Bytes{}.magic("GGUF").put<uint32_t>(0x03000000u).zeros(16).b, "big-endian");
}

TEST(GgufHostile, CountsLargerThanTheFile) {
    expect_error(Bytes{}.header(3, 0, 1ull << 60).b, "metadata entries");
    expect_error(Bytes{}.header(3, 1ull << 60, 0).b, "tensors");
    expect_error(Bytes{}.header(3, 0, 1).str("k").put<uint32_t>(9).put<uint32_t>(4).put<uint64_t>(1ull << 62).b, "array of");
    expect_error(Bytes{}.header(3, 0, 1).str("k").put<uint32_t>(9).put<uint32_t>(8).put<uint64_t>(1ull << 62).zeros(8).b, "array of");
    expect_error(Bytes{}.header(3, 0, 1).put<uint64_t>(1ull << 63).zeros(16).b, "truncated");
    expect_error(Bytes{}.header(3, 0, 1).str("k").put<uint32_t>(8).put<uint64_t>(~0ull).zeros(16).b, "truncated");
}

TEST(GgufHostile, BadMetadata) {
    expect_error(Bytes{}.header(3, 0, 1).str("k").put<uint32_t>(13).zeros(8).b, "unknown metadata value type 13");
    expect_error(Bytes{}.header(3, 0, 2).kv_u32("k", 1).kv_u32("k", 2).b, "duplicate metadata key 'k'");
    expect_error(Bytes{}.header(3, 0, 1).kv_u32("general.alignment", 48).b, "power of two");
    expect_error(Bytes{}.header(3, 0, 1).kv_u32("general.alignment", 0).b, "power of two");
    // Arrays nested past the depth limit.
    Bytes deep;
    deep.header(3, 0, 1).str("k");
    deep.put<uint32_t>(9);
    for (int i = 0; i < 20; ++i) deep.put<uint32_t>(9).put<uint64_t>(1);
    deep.put<uint32_t>(4).put<uint64_t>(0);
    expect_error(deep.b, "nested deeper");
}

TEST(GgufHostile, BadTensorInfos) {
    auto file_with = [](std::vector<int64_t> ne, uint32_t type, uint64_t offset, size_t data = 64) {
        return Bytes{}.header(3, 1, 0).tensor("w", std::move(ne), type, offset).pad().zeros(data).b;
    };
    expect_error(file_with({8}, 99, 0), "tensor 'w' has unknown ggml type id 99");
    expect_error(file_with({8}, 4, 0), "unknown ggml type id 4");
    expect_error(file_with({8, 1, 1, 1, 1}, 0, 0), "dimensions (at most 4)");
    expect_error(file_with({-8}, 0, 0), "negative dimension");
    expect_error(file_with({1ll << 40, 1ll << 40}, 0, 0), "overflow");
    expect_error(file_with({33}, 8, 0), "not a multiple of the q8_0 block size 32");
    expect_error(file_with({8}, 0, 16), "not a multiple of the alignment");
    expect_error(file_with({8}, 0, 64), "past the end");
    expect_error(file_with({64}, 0, 0), "past the end");
    expect_error(file_with({8}, 0, 1ull << 62), "past the end");
    expect_error(Bytes{}.header(3, 2, 0).tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).pad().zeros(96).b,
                 "tensors 'a' and 'b' overlap");
    expect_error(Bytes{}.header(3, 2, 0).tensor("a", {8}, 0, 0).tensor("a", {8}, 0, 32).pad().zeros(64).b, "duplicate tensor 'a'");
}

TEST(GgufHostile, RandomCorruptionNeverCrashes) {
    // A small in-test fuzz (the libFuzzer target in tests/fuzz goes much further).
    const auto good = valid_file();
    std::mt19937 rng(12345);
    size_t rejected = 0;
    for (int iter = 0; iter < 20000; ++iter) {
        auto f = good;
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int i = 0; i < flips; ++i) f[rng() % f.size()] = static_cast<uint8_t>(rng());
        if (!error_of(f).empty()) ++rejected;
    }
    EXPECT_GT(rejected, 0u);
}
