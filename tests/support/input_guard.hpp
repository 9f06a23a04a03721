#pragma once
// For the "never destroy an input" tests: a file with known bytes, and links to it that a
// careless tool would write through.
#include "run_tool.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <string>

namespace pocket::test {

inline void write_text(const std::filesystem::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

inline std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// `tool` with `args` must refuse with one line naming `named` and exit 1.
inline void expect_refused(const std::string& tool, const std::string& args, const std::string& named) {
    const Result r = run_tool(tool, args);
    EXPECT_EQ(r.status, 1) << tool << " " << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.starts_with(tool)) << "prefixed with the tool's name: " << r.err;
}

// Each way of naming `input` as the output (itself, a symlink, a hard link), then a directory
// and a missing directory: `make_args(output)` gives the command line. The input keeps its bytes.
inline void expect_input_survives(const std::string& tool, const ScratchDir& dir, const std::filesystem::path& input,
                                  const std::function<std::string(const std::string&)>& make_args) {
    const std::string before = read_text(input);
    std::filesystem::create_symlink(input, dir / "symlink");
    std::filesystem::create_hard_link(input, dir / "hardlink");
    for (const auto& out : {input, dir / "symlink", dir / "hardlink"}) {
        SCOPED_TRACE(out.string());
        expect_refused(tool, make_args(out.string()), out.filename().string());
        EXPECT_EQ(read_text(input), before) << "the input was changed";
    }
    std::filesystem::create_directory(dir / "adir");
    expect_refused(tool, make_args((dir / "adir").string()), "directory");
    expect_refused(tool, make_args((dir / "nodir" / "out").string()), "does not exist");
    EXPECT_FALSE(std::filesystem::exists(dir / "nodir"));
    std::filesystem::remove(dir / "symlink");
    std::filesystem::remove(dir / "hardlink");
    std::filesystem::remove(dir / "adir");
}

}  // namespace pocket::test
