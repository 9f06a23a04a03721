#pragma once
// The shape every argument error of every tool has: one line "TOOL: ...", exit 1.
#include "run_tool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace pocket::test {

// One line "TOOL: ...", exit 1, naming `named`.
inline void expect_flag_error(const std::string& tool, const std::string& args, const std::string& named) {
    const Result r = run_tool(tool, args);
    EXPECT_EQ(r.status, 1) << tool << " " << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_TRUE(r.err.starts_with(tool + ": ")) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << tool << " " << args << ": " << r.err;
}

}  // namespace pocket::test
