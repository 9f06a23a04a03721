// The llama2.c converter against llama.cpp's conversion of the same checkpoint.
#include "llama2c.hpp"
#include "pocket/error.hpp"
#include "input_guard.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using pocket::test::read_file;

TEST(ConvertLlama2c, ByteIdenticalToLlamaCpp) {
    POCKET_REQUIRE_SHARED(shared);
    const fs::path out = fs::temp_directory_path() / ("pocket-convert-" + std::to_string(::getpid()) + ".gguf");
    for (bool tied : {false, true}) {
        pocket::tools::Llama2cConvertOptions o;
        o.checkpoint = (shared / "models" / "stories260K.bin").string();
        o.tokenizer = (shared / "models" / "tok512.bin").string();
        o.output = out.string();
        o.tied = tied;
        pocket::tools::convert_llama2c(o);
        const auto expected = read_file(shared / "gguf" / (tied ? "stories260K-f32-tied.gguf" : "stories260K-f32.gguf"));
        EXPECT_TRUE(read_file(out) == expected) << (tied ? "tied" : "untied") << " conversion differs from llama.cpp's";
    }
    fs::remove(out);
}

TEST(ConvertLlama2c, BundledModelIsTheConversion) {
    POCKET_REQUIRE_SHARED(shared);
    EXPECT_TRUE(read_file(pocket::test::source_dir() / "models" / "stories260K.gguf") ==
                read_file(shared / "gguf" / "stories260K-f32.gguf"));
}

TEST(ConvertLlama2c, RejectsGarbage) {
    const fs::path bad = fs::temp_directory_path() / ("pocket-bad-" + std::to_string(::getpid()) + ".bin");
    { std::ofstream(bad) << "this is not a checkpoint at all, not even close"; }
    pocket::tools::Llama2cConvertOptions o;
    o.checkpoint = bad.string();
    o.tokenizer = bad.string();
    o.output = (fs::temp_directory_path() / "pocket-never.gguf").string();
    EXPECT_THROW(pocket::tools::convert_llama2c(o), pocket::Error);
    EXPECT_FALSE(fs::exists(o.output));
    fs::remove(bad);
}

// The output named as the checkpoint or the tokenizer (or a link to either, a directory, a
// missing directory): refused before anything is read, the input untouched.
TEST(ConvertTool, NeverOverwritesAnInput) {
    pocket::test::ScratchDir dir;
    pocket::test::write_text(dir / "ck.bin", "checkpoint bytes");
    pocket::test::write_text(dir / "tok.bin", "tokenizer bytes");
    for (const char* in : {"ck.bin", "tok.bin"})
        pocket::test::expect_input_survives("convert", dir, dir / in, [&](const std::string& out) {
            return (dir / "ck.bin").string() + " -z " + (dir / "tok.bin").string() + " -o " + out;
        });
}
