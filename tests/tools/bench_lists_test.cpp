// bench as a llama-bench user types it: lists and ranges for every parameter, -pg, -d,
// -fa, -o sql, an aligned table with llama-bench's build line, progress before each test.
#include "flag_error.hpp"
#include "run_tool.hpp"
#include "shared_data.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

using pocket::test::expect_flag_error;
using pocket::test::Result;
using pocket::test::run_tool;

namespace {

std::string model() { return (pocket::test::source_dir() / "models" / "stories260K.gguf").string(); }

std::vector<nlohmann::json> json_lines(const std::string& out) {
    std::vector<nlohmann::json> v;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) v.push_back(nlohmann::json::parse(line));
    return v;
}

size_t chars(const std::string& s) {
    return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace

// Each combination of the lists is one test, in llama-bench's order (pp sizes, then tg, per
// parameter combination); a range expands to its values.
TEST(BenchLists, ListsAndRangesGiveOneTestPerCombination) {
    const Result r = run_tool("bench", "-m " + model() + " -p 16-32+16 -n 0 -t 1 -b 32,64 -ub 8 -r 1 -o jsonl");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = json_lines(r.out);
    ASSERT_EQ(j.size(), 4u) << r.out;
    const int want[4][2] = {{32, 16}, {32, 32}, {64, 16}, {64, 32}};
    for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(j[i]["n_batch"], want[i][0]);
        EXPECT_EQ(j[i]["n_prompt"], want[i][1]);
        EXPECT_EQ(j[i]["n_ubatch"], 8);
    }
    const Result times = run_tool("bench", "-m " + model() + " -p 4-32*2 -n 0 -t 1 -r 1 -o jsonl");
    ASSERT_EQ(times.status, 0) << times.err;
    EXPECT_EQ(json_lines(times.out).size(), 4u) << "4, 8, 16, 32";
}

// -pg PP,TG is one test of both; -d fills the context first; -fa 0,1 doubles the tests.
TEST(BenchLists, PromptGenerationDepthAndFlashAttn) {
    const Result r = run_tool("bench", "-m " + model() + " -p 0 -n 0 -pg 16,4 -d 0,8 -fa 0,1 -t 1 -r 1 -o jsonl");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = json_lines(r.out);
    ASSERT_EQ(j.size(), 4u) << r.out;
    for (const auto& x : j) {
        EXPECT_EQ(x["n_prompt"], 16);
        EXPECT_EQ(x["n_gen"], 4);
        EXPECT_GT(x["avg_ts"].get<double>(), 0.0);
    }
    EXPECT_EQ(j[0]["n_depth"], 0);
    EXPECT_EQ(j[1]["n_depth"], 8);
    EXPECT_EQ(j[0]["flash_attn"], 0);
    EXPECT_EQ(j[2]["flash_attn"], 1);
    const Result md = run_tool("bench", "-m " + model() + " -p 0 -n 0 -pg 16,4 -d 8 -t 1 -r 1");
    ASSERT_EQ(md.status, 0) << md.err;
    EXPECT_NE(md.out.find("pp16+tg4 @ d8"), std::string::npos) << md.out;
}

// Markdown: every row as wide as the header, a column for a parameter away from its
// default only, and llama-bench's build line under the table.
TEST(BenchLists, MarkdownIsAlignedWithTheBuildLine) {
    const Result r = run_tool("bench", "-m " + model() + " -p 16 -n 4 -t 1 -b 64 -r 2");
    ASSERT_EQ(r.status, 0) << r.err;
    std::istringstream in(r.out);
    std::vector<std::string> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(line);
    ASSERT_EQ(rows.size(), 6u) << r.out;  // header, rule, 2 tests, blank, build
    for (size_t i = 1; i < 4; ++i) EXPECT_EQ(chars(rows[i]), chars(rows[0])) << r.out;
    EXPECT_NE(rows[0].find("| n_batch |"), std::string::npos) << rows[0];
    EXPECT_EQ(rows[0].find("n_ubatch"), std::string::npos) << rows[0];
    EXPECT_EQ(rows[0].find("| fa"), std::string::npos) << rows[0];
    EXPECT_TRUE(rows[5].starts_with("build: ")) << rows[5];
    EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
}

// The build line names the commit the binary was built from (stamped at build time, not when
// CMake last configured), as llama-bench's does; outside a git checkout there is none to check.
TEST(BenchLists, BuildLineNamesTheCheckedOutCommit) {
    const std::string git = "git -C '" + pocket::test::source_dir().string() + "' ";
    std::string head;
    if (std::FILE* p = ::popen((git + "rev-parse --short=8 HEAD 2>/dev/null").c_str(), "r")) {
        char buf[64] = {};
        if (std::fgets(buf, sizeof buf, p)) head = buf;
        ::pclose(p);
    }
    if (head.size() < 8) GTEST_SKIP() << "the sources are not a git checkout";
    head.resize(8);
    const Result r = run_tool("bench", "-m " + model() + " -p 0 -n 1 -t 1 -r 1 -o json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j.empty()) << r.out;
    EXPECT_EQ(j[0]["build_commit"], head) << "rebuilt since the last commit?";
}

TEST(BenchLists, SqlAndProgressBeforeEachTest) {
    const Result r = run_tool("bench", "-m " + model() + " -p 16 -n 4 -t 1 -r 1 -o sql --progress");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(r.out.starts_with("CREATE TABLE IF NOT EXISTS test (")) << r.out;
    size_t inserts = 0;
    for (size_t p = r.out.find("INSERT INTO test ("); p != std::string::npos; p = r.out.find("INSERT INTO test (", p + 1)) ++inserts;
    EXPECT_EQ(inserts, 2u) << r.out;
    EXPECT_NE(r.err.find("bench: test 1/2:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bench: test 2/2:"), std::string::npos) << r.err;
}

TEST(BenchLists, BadListsAreOneLineErrors) {
    expect_flag_error("bench", "-m x.gguf -p 32-16", "-p 32-16: the range ends before it starts");
    expect_flag_error("bench", "-m x.gguf -p 16-32+0", "-p 16-32+0: the step must be at least 1");
    expect_flag_error("bench", "-m x.gguf -b 16,x", "-b x: not an integer");
    expect_flag_error("bench", "-m x.gguf -pg 512", "-pg 512: must be PP,TG");
    expect_flag_error("bench", "-m x.gguf -fa maybe", "-fa maybe: must be 0, 1, on, off or auto");
    expect_flag_error("bench", "-m x.gguf -d -1", "-d -1: must be between 0 and");
    expect_flag_error("bench", "-m x.gguf -ub 0", "-ub 0: must be between 1 and");
    expect_flag_error("bench", "-m x.gguf -t 0-4", "-t 0: must be between 1 and");
}
