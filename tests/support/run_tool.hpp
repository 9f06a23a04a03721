#pragma once
// Runs a built tool (bin/<tool>) through the shell as a user types it, capturing its output.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace pocket::test {

struct Result {
    int status;
    std::string out, err;
};

// `args` go through the shell (quote them); `env` is prepended (e.g. "POCKET_TEST_DEVICE=1").
inline Result run_tool(const std::string& tool, const std::string& args, const std::string& env = "") {
    const std::filesystem::path err_file = std::filesystem::temp_directory_path() / ("pocket-run-err-" + std::to_string(::getpid()));
    const std::string cmd = (env.empty() ? "" : env + " ") + std::string(POCKET_BIN_DIR) + "/" + tool + " " + args + " 2>" + err_file.string();
    Result r;
    std::FILE* p = ::popen(cmd.c_str(), "r");
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream e(err_file);
    r.err.assign(std::istreambuf_iterator<char>(e), {});
    std::filesystem::remove(err_file);
    return r;
}

}  // namespace pocket::test
