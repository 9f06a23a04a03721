// Writer -> reader round trips: every metadata type, nested arrays, tensor data and
// alignment; and the writer's promise never to leave a partial file under the target name.
#include "pocket/error.hpp"
#include "pocket/gguf.hpp"
#include "pocket/gguf_writer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <random>
#include <unistd.h>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

// This process's scratch folder, removed with everything in it when the tests end.
fs::path temp_dir() {
    struct Scratch {
        fs::path dir = fs::temp_directory_path() / ("pocket-gguf-" + std::to_string(::getpid()));
        ~Scratch() {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    };
    static const Scratch scratch;
    fs::create_directories(scratch.dir);
    return scratch.dir;
}

size_t count_files(const fs::path& dir) {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}));
}

}  // namespace

TEST(GgufRoundTrip, EveryMetadataType) {
    const fs::path dir = temp_dir() / "types";
    fs::create_directories(dir);
    const std::string path = (dir / "m.gguf").string();
    {
        GgufWriter w(path);
        w.set<uint8_t>("u8", 200);
        w.set<int8_t>("i8", -100);
        w.set<uint16_t>("u16", 60000);
        w.set<int16_t>("i16", -30000);
        w.set<uint32_t>("u32", 4000000000u);
        w.set<int32_t>("i32", -2000000000);
        w.set<float>("f32", 0.1f);
        w.set<bool>("bool", true);
        w.set_string("string", "héllo\nworld");
        w.set<uint64_t>("u64", 0xFEDCBA9876543210ull);
        w.set<int64_t>("i64", -1234567890123ll);
        w.set<double>("f64", 2.718281828459045);
        const std::vector<int32_t> ints{1, -2, 3};
        w.set_array<int32_t>("arr.i32", ints);
        const std::vector<float> floats{1.5f, -0.25f};
        w.set_array<float>("arr.f32", floats);
        const std::vector<bool> bools_src{true, false, true};
        const bool bools[3] = {bools_src[0], bools_src[1], bools_src[2]};
        w.set_array<bool>("arr.bool", std::span<const bool>(bools, 3));
        const std::vector<std::string> strings{"a", "", "ccc"};
        w.set_strings("arr.str", strings);
        w.set_array<uint8_t>("arr.empty", {});
        // [[1, 2], [3]] as an array of arrays of u16
        std::vector<uint8_t> enc;
        for (std::vector<uint16_t> inner : {std::vector<uint16_t>{1, 2}, std::vector<uint16_t>{3}}) {
            const uint32_t t = static_cast<uint32_t>(GgufType::U16);
            const uint64_t n = inner.size();
            enc.insert(enc.end(), reinterpret_cast<const uint8_t*>(&t), reinterpret_cast<const uint8_t*>(&t) + 4);
            enc.insert(enc.end(), reinterpret_cast<const uint8_t*>(&n), reinterpret_cast<const uint8_t*>(&n) + 8);
            for (uint16_t x : inner) enc.insert(enc.end(), reinterpret_cast<const uint8_t*>(&x), reinterpret_cast<const uint8_t*>(&x) + 2);
        }
        w.set_encoded_array("arr.nested", GgufType::ARRAY, 2, enc);
        w.begin();
        w.finish();
    }
    const GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.get<uint8_t>("u8"), 200);
    EXPECT_EQ(f.get<int8_t>("i8"), -100);
    EXPECT_EQ(f.get<uint16_t>("u16"), 60000);
    EXPECT_EQ(f.get<int16_t>("i16"), -30000);
    EXPECT_EQ(f.get<uint32_t>("u32"), 4000000000u);
    EXPECT_EQ(f.get<int32_t>("i32"), -2000000000);
    EXPECT_EQ(f.get<float>("f32"), 0.1f);
    EXPECT_EQ(f.get<bool>("bool"), true);
    EXPECT_EQ(f.get<std::string_view>("string"), "héllo\nworld");
    EXPECT_EQ(f.get<uint64_t>("u64"), 0xFEDCBA9876543210ull);
    EXPECT_EQ(f.get<int64_t>("i64"), -1234567890123ll);
    EXPECT_EQ(f.get<double>("f64"), 2.718281828459045);
    EXPECT_EQ(f.find("u8")->type, GgufType::U8);
    EXPECT_EQ(f.find("f64")->type, GgufType::F64);
    // Width conversions when the value fits; errors when it does not.
    EXPECT_EQ(f.get<int64_t>("u32"), 4000000000ll);
    EXPECT_THROW(f.get<int32_t>("u32"), Error);
    EXPECT_THROW(f.get<uint32_t>("i8"), Error);
    EXPECT_THROW(f.get<uint32_t>("string"), Error);
    EXPECT_THROW(f.get<uint32_t>("missing"), Error);
    EXPECT_FALSE(f.find_as<uint32_t>("missing").has_value());

    auto ints = f.get_array<int32_t>("arr.i32");
    ASSERT_EQ(ints.size(), 3u);
    EXPECT_EQ(ints[1], -2);
    auto floats = f.get_array<float>("arr.f32");
    ASSERT_EQ(floats.size(), 2u);
    EXPECT_EQ(floats[1], -0.25f);
    auto bools = f.get_array<bool>("arr.bool");
    ASSERT_EQ(bools.size(), 3u);
    EXPECT_TRUE(bools[0]);
    EXPECT_FALSE(bools[1]);
    auto strings = f.get_strings("arr.str");
    ASSERT_EQ(strings.size(), 3u);
    EXPECT_EQ(strings[0], "a");
    EXPECT_EQ(strings[1], "");
    EXPECT_EQ(strings[2], "ccc");
    EXPECT_EQ(f.get_array<uint8_t>("arr.empty").size(), 0u);
    EXPECT_THROW(f.get_array<float>("arr.i32"), Error);

    const GgufValue* nested = f.find("arr.nested");
    ASSERT_NE(nested, nullptr);
    ASSERT_EQ(nested->elem_type, GgufType::ARRAY);
    ASSERT_EQ(nested->items().size(), 2u);
    auto first = nested->items()[0].array<uint16_t>();
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[1], 2);
    EXPECT_EQ(nested->items()[1].array<uint16_t>()[0], 3);

    // Copying every value into a second file reproduces it exactly.
    const std::string copy_path = (dir / "copy.gguf").string();
    {
        GgufWriter w(copy_path);
        for (const auto& kv : f.metadata()) w.set_value(kv.key, kv.value);
        w.begin();
        w.finish();
    }
    const auto a = std::vector<uint8_t>(f.file_data(), f.file_data() + f.file_size());
    const GgufFile g = GgufFile::open(copy_path);
    const auto b = std::vector<uint8_t>(g.file_data(), g.file_data() + g.file_size());
    EXPECT_EQ(a, b);
    fs::remove_all(dir);
}

TEST(GgufRoundTrip, TensorsStreamedInPiecesWithAlignment) {
    const fs::path dir = temp_dir() / "tensors";
    fs::create_directories(dir);
    for (uint64_t alignment : {32ull, 64ull}) {
        const std::string path = (dir / "t.gguf").string();
        std::vector<float> a(7 * 3);
        std::iota(a.begin(), a.end(), 0.5f);
        std::vector<uint8_t> q(2 * 34 * 5);  // q8_0: 5 rows of 64
        std::mt19937 rng(1);
        for (auto& x : q) x = static_cast<uint8_t>(rng());
        {
            GgufWriter w(path, alignment);
            w.set_string("general.architecture", "test");
            const int64_t ne_a[] = {7, 3};
            const int64_t ne_q[] = {64, 5};
            w.add_tensor("a", GgmlType::F32, ne_a);
            w.add_tensor("q", GgmlType::Q8_0, ne_q);
            w.begin();
            w.write(a.data(), 10 * sizeof(float));  // in two pieces
            w.write(reinterpret_cast<const uint8_t*>(a.data()) + 10 * sizeof(float), 11 * sizeof(float));
            w.write(q.data(), q.size());
            w.finish();
        }
        const GgufFile f = GgufFile::open(path);
        EXPECT_EQ(f.alignment(), alignment);
        EXPECT_EQ(f.data_offset() % alignment, 0u);
        ASSERT_EQ(f.tensors().size(), 2u);
        const auto& ta = f.tensor("a");
        EXPECT_EQ(ta.ne[0], 7);
        EXPECT_EQ(ta.ne[1], 3);
        EXPECT_EQ(ta.n_dims, 2u);
        EXPECT_EQ(ta.type, GgmlType::F32);
        EXPECT_EQ(0, std::memcmp(ta.data, a.data(), a.size() * sizeof(float)));
        const auto& tq = f.tensor("q");
        EXPECT_EQ(tq.offset % alignment, 0u);
        EXPECT_EQ(tq.n_bytes, q.size());
        EXPECT_EQ(0, std::memcmp(tq.data, q.data(), q.size()));
        EXPECT_THROW(f.tensor("nope"), Error);
        // The --no-mmap path sees the same bytes.
        const GgufFile g = GgufFile::open(path, {.use_mmap = false});
        EXPECT_EQ(0, std::memcmp(g.tensor("q").data, q.data(), q.size()));
    }
    fs::remove_all(dir);
}

TEST(GgufWriterSafety, AbandonedWriteLeavesNothing) {
    const fs::path dir = temp_dir() / "abandon";
    fs::create_directories(dir);
    const std::string path = (dir / "out.gguf").string();
    {
        GgufWriter w(path);
        const int64_t ne[] = {32};
        w.add_tensor("x", GgmlType::F32, ne);
        w.begin();
        float half[16] = {};
        w.write(half, sizeof half);
        // destroyed before finish(): as if the process had failed half-way
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(count_files(dir), 0u) << "the temporary file must be removed";

    {
        GgufWriter w(path);
        const int64_t ne[] = {32};
        w.add_tensor("x", GgmlType::F32, ne);
        w.begin();
        EXPECT_THROW(w.finish(), Error);  // data missing
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(count_files(dir), 0u);

    {
        GgufWriter w(path);
        const int64_t ne[] = {33};
        EXPECT_THROW(w.add_tensor("x", GgmlType::Q8_0, ne), Error);  // not a whole block
    }
    fs::remove_all(dir);
}

TEST(GgufWriterSafety, ExistingTargetSurvivesUntilRename) {
    const fs::path dir = temp_dir() / "replace";
    fs::create_directories(dir);
    const std::string path = (dir / "out.gguf").string();
    { GgufWriter w(path); w.set<uint32_t>("v", 1); w.begin(); w.finish(); }
    {
        GgufWriter w(path);
        w.set<uint32_t>("v", 2);
        w.begin();
        EXPECT_EQ(GgufFile::open(path).get<uint32_t>("v"), 1u);  // old file still whole
        w.finish();
    }
    EXPECT_EQ(GgufFile::open(path).get<uint32_t>("v"), 2u);
    fs::remove_all(dir);
}
