// Every GGUF in ../shared, read here, against what llama.cpp's gguf-py and llama-gguf-hash
// recorded beside it (.dump.json and .xxh64.txt).
#include "gguf_commands.hpp"
#include "pocket/gguf.hpp"
#include "pocket/gguf_writer.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace pocket;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> shared_ggufs(const fs::path& shared) {
    std::vector<fs::path> files;
    for (const char* sub : {"gguf", "vocab", "reference/models", "reference/f_quantize"}) {
        if (!fs::is_directory(shared / sub)) continue;
        for (const auto& e : fs::directory_iterator(shared / sub))
            if (e.path().extension() == ".gguf") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST(GgufReference, InfoJsonMatchesDumps) {
    POCKET_REQUIRE_SHARED(shared);
    size_t compared = 0;
    for (const auto& path : shared_ggufs(shared)) {
        const fs::path dump = path.string() + ".dump.json";
        if (!fs::exists(dump)) continue;
        SCOPED_TRACE(path.string());
        const GgufFile f = GgufFile::open(path.string());
        std::ostringstream out;
        tools::gguf_info(f, {.json = true}, out);
        const auto mine = nlohmann::json::parse(out.str());
        const auto theirs = nlohmann::json::parse(slurp(dump));
        for (const char* key : {"version", "alignment", "data_offset", "n_kv", "n_tensors"}) EXPECT_EQ(mine[key], theirs[key]) << key;
        ASSERT_EQ(mine["metadata"].size(), theirs["metadata"].size());
        for (const auto& [key, value] : theirs["metadata"].items()) {
            ASSERT_TRUE(mine["metadata"].contains(key)) << key;
            EXPECT_EQ(mine["metadata"][key], value) << key;
        }
        EXPECT_EQ(mine["tensors"], theirs["tensors"]);
        ++compared;
    }
    EXPECT_GE(compared, 14u) << "expected the shared gguf, vocab and reference model dumps";
}

TEST(GgufReference, HashMatchesLlamaGgufHash) {
    POCKET_REQUIRE_SHARED(shared);
    size_t compared = 0;
    for (const auto& path : shared_ggufs(shared)) {
        const fs::path expected = path.string() + ".xxh64.txt";
        if (!fs::exists(expected)) continue;
        SCOPED_TRACE(path.string());
        std::ostringstream out;
        tools::gguf_hash(GgufFile::open(path.string()), path.filename().string(), out);
        EXPECT_EQ(out.str(), slurp(expected));
        ++compared;
    }
    EXPECT_GE(compared, 14u);
}

TEST(GgufReference, VocabOnlyFilesEndBeforeTheirDataOffset) {
    POCKET_REQUIRE_SHARED(shared);
    const fs::path p = shared / "vocab" / "ggml-vocab-gpt-2.gguf";
    const GgufFile f = GgufFile::open(p.string());
    EXPECT_EQ(f.tensors().size(), 0u);
    EXPECT_GT(f.data_offset(), f.file_size());  // gguf-py writes no padding without tensors
    EXPECT_EQ(f.get<std::string_view>("tokenizer.ggml.model"), "gpt2");
    EXPECT_EQ(f.get_strings("tokenizer.ggml.tokens").size(), 50257u);
}

TEST(GgufReference, TypedAccessorsOnStories) {
    POCKET_REQUIRE_SHARED(shared);
    const GgufFile f = GgufFile::open((shared / "gguf" / "stories260K-q8_0.gguf").string());
    EXPECT_EQ(f.get<uint32_t>("llama.block_count"), 5u);
    EXPECT_EQ(f.get<std::string_view>("general.architecture"), "llama");
    EXPECT_FLOAT_EQ(f.get<float>("llama.rope.freq_base"), 10000.0f);
    EXPECT_EQ(f.get_array<float>("tokenizer.ggml.scores").size(), 512u);
    EXPECT_EQ(f.tensor("blk.0.ffn_down.weight").type, GgmlType::F16);  // rows of 172 fall back
    EXPECT_EQ(f.tensor("token_embd.weight").type, GgmlType::Q8_0);
}

// A key or tensor name that is not UTF-8 (or holds control characters) is shown escaped,
// as --json shows it replaced: a hostile file cannot write raw bytes to the terminal.
TEST(GgufInfo, NonUtf8NamesAreEscaped) {
    const auto path = std::filesystem::temp_directory_path() / ("pocket-info-utf8-" + std::to_string(::getpid()) + ".gguf");
    {
        GgufWriter w(path.string());
        w.set<uint32_t>("bad\xff\x1b[2Jkey", 1);
        w.set<uint32_t>("caf\xc3\xa9", 2);
        const int64_t ne[1] = {4};
        w.add_tensor("t\xfe", GgmlType::F32, ne);
        w.begin();
        const float v[4] = {};
        w.write(v, sizeof v);
        w.finish();
    }
    std::ostringstream out;
    tools::gguf_info(GgufFile::open(path.string()), {}, out);
    std::filesystem::remove(path);
    const std::string text = out.str();
    EXPECT_NE(text.find("bad\\xFF\\x1B[2Jkey"), std::string::npos) << text;
    EXPECT_NE(text.find("caf\xc3\xa9"), std::string::npos) << "valid UTF-8 stays as it is: " << text;
    EXPECT_NE(text.find("t\\xFE"), std::string::npos) << text;
    EXPECT_EQ(text.find('\xff'), std::string::npos);
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
}
