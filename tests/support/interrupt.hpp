#pragma once
// For the interrupt tests: start a tool in the background, wait until its temporary file
// appears, signal it, and collect its exit status.
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace pocket::test {

// bin/<tool> with `args`, its output discarded.
inline pid_t spawn_tool(const std::string& tool, const std::vector<std::string>& args) {
    const std::string exe = std::string(POCKET_BIN_DIR) + "/" + tool;
    std::vector<char*> argv{const_cast<char*>(exe.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        ::execv(exe.c_str(), argv.data());
        ::_exit(127);
    }
    return pid;
}

// True once a file whose name starts with `prefix` is in `dir`; false if `pid` ended first
// or 60 s passed.
inline bool wait_for_file(const std::filesystem::path& dir, const std::string& prefix, pid_t pid) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        for (const auto& e : std::filesystem::directory_iterator(dir))
            if (e.path().filename().string().starts_with(prefix)) return true;
        int st;
        if (::waitpid(pid, &st, WNOHANG) == pid) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return false;
}

// The exit code, or -signal when it was killed by one.
inline int wait_exit(pid_t pid) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

}  // namespace pocket::test
