// The `serve` executable as a user starts it: flag errors, and SIGINT / SIGTERM ending it with
// status 0 while a client is being answered.
#include "run_tool.hpp"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <cstdio>
#include <future>
#include <iostream>
#include <string>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using pocket::test::Result;
using pocket::test::run_tool;

void expect_one_line_error(const std::string& args, const std::string& named) {
    const Result r = run_tool("serve", args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
    EXPECT_TRUE(r.err.starts_with("serve: ")) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
}

TEST(ServeTool, BadFlagsAreOneLineErrors) {
    expect_one_line_error("--port 0 -np 0", "-np");
    expect_one_line_error("--port 70000", "--port");
    expect_one_line_error("--port 0 -c -5", "-c");
    expect_one_line_error("--port 0 --queue-timeout 0", "--queue-timeout");
    expect_one_line_error("--port 0 --tmep 0.5", "unknown flag");
    expect_one_line_error("--port 0 -m /nonexistent/model.gguf", "/nonexistent/model.gguf");
    expect_one_line_error("--port 0 -c 8 -np 4", "-np");
}

// serve started in the background, its stderr read for the port.
struct Process {
    pid_t pid = -1;
    std::FILE* err = nullptr;
    int port = 0;

    explicit Process(const std::vector<std::string>& args) {
        int fds[2];
        if (::pipe(fds) != 0) return;
        const std::string exe = std::string(POCKET_BIN_DIR) + "/serve";
        std::vector<char*> argv{const_cast<char*>(exe.c_str())};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        pid = ::fork();
        if (pid == 0) {
            ::dup2(fds[1], 2);
            ::close(fds[0]);
            ::execv(exe.c_str(), argv.data());
            ::_exit(127);
        }
        ::close(fds[1]);
        err = ::fdopen(fds[0], "r");
    }
    ~Process() {
        if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        if (err) std::fclose(err);
    }
    // Reads stderr until a line containing `what`; returns it ("" at the end of the output).
    std::string wait_for(const std::string& what) {
        char line[4096];
        while (err && std::fgets(line, sizeof line, err))
            if (std::string(line).find(what) != std::string::npos) return line;
        return {};
    }
    int exit_status() {
        int st = 0;
        ::waitpid(pid, &st, 0);
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    }
};

void stops_cleanly_on(int signal) {
    std::signal(SIGPIPE, SIG_IGN);
    Process p({"--port", "0", "-np", "2", "-c", "8192", "-t", "1"});
    const std::string listening = p.wait_for("listening on http://127.0.0.1:");
    ASSERT_FALSE(listening.empty());
    const int port = std::stoi(listening.substr(listening.find("127.0.0.1:") + 10));
    // A long streamed answer in flight when the signal comes.
    auto answer = std::async(std::launch::async, [port] {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(60, 0);
        return c.Post("/v1/completions", R"({"prompt": "Once", "ignore_eos": true, "stream": true})", "application/json");
    });
    // The signal comes once a slot is answering (a loaded sanitizer build may take seconds).
    httplib::Client c("127.0.0.1", port);
    bool busy = false;
    for (int i = 0; i < 3000 && !busy; ++i) {
        auto m = c.Get("/metrics");
        busy = m && m->body.find("\npocket_slots_busy 1") != std::string::npos;
        if (!busy) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(busy) << "the request never reached a slot";
    ::kill(p.pid, signal);
    EXPECT_EQ(p.exit_status(), 0);
    const auto res = answer.get();
    ASSERT_TRUE(res) << "the client got no answer";
    EXPECT_EQ(res->status, 200);
    EXPECT_TRUE(res->body.ends_with("data: [DONE]\n\n")) << "the stream was cut: " << res->body.substr(res->body.size() - std::min<size_t>(200, res->body.size()));
}

// Runs a shell command; its exit status (-1 when killed) and what it printed.
static std::pair<int, std::string> run_shell(const std::string& cmd) {
    std::string out;
    std::FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return {-1, "popen failed: " + cmd};
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    const int st = ::pclose(f);
    return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

// The official openai npm package as the client. It is not vendored: install it outside the
// source tree with `npm install --prefix build/npm openai` (the test skips, visibly, without it).
TEST(ServeTool, OpenAINpmClient) {
    const std::string modules = std::string(POCKET_BINARY_DIR) + "/npm";
    if (!std::filesystem::exists(modules + "/node_modules/openai/package.json"))
        GTEST_SKIP() << "the openai npm package is not installed: npm install --prefix " << modules << " openai";
    if (std::system("node --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
    Process p({"--port", "0", "-np", "2", "-c", "512", "-t", "1", "--api-key", "test-key"});
    const std::string listening = p.wait_for("listening on http://127.0.0.1:");
    ASSERT_FALSE(listening.empty());
    const int port = std::stoi(listening.substr(listening.find("127.0.0.1:") + 10));
    const std::string cmd = "node " + std::string(POCKET_SOURCE_DIR) + "/tests/tools/serve_openai_client.cjs " + modules + " " +
                            std::to_string(port) + " 2>&1";
    const auto [status, out] = run_shell(cmd);
    EXPECT_EQ(status, 0) << out;
    ::kill(p.pid, SIGTERM);
    EXPECT_EQ(p.exit_status(), 0);
}

// The chat page in a real browser (chromium, headless, through puppeteer-core): two streamed
// answers equal to the API's, the stop button, the conversation kept across a reload.
TEST(ServeTool, ChatPageInABrowser) {
    const std::string modules = std::string(POCKET_BINARY_DIR) + "/npm";
    if (!std::filesystem::exists(modules + "/node_modules/puppeteer-core/package.json"))
        GTEST_SKIP() << "the puppeteer-core npm package is not installed: npm install --prefix " << modules << " puppeteer-core";
    if (std::system("node --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
    std::string chromium;
    for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (::access(c, X_OK) == 0) chromium = c;
    if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
    Process p({"--port", "0", "-np", "1", "-c", "2048", "-t", "1"});
    const std::string listening = p.wait_for("listening on http://127.0.0.1:");
    ASSERT_FALSE(listening.empty());
    const int port = std::stoi(listening.substr(listening.find("127.0.0.1:") + 10));
    const std::string cmd = "node " + std::string(POCKET_SOURCE_DIR) + "/tests/tools/serve_chat_page.cjs " + modules + " " +
                            std::to_string(port) + " " + chromium + " 2>&1";
    const auto [status, out] = run_shell(cmd);
    EXPECT_EQ(status, 0) << out;
    std::cout << out;
    ::kill(p.pid, SIGTERM);
    EXPECT_EQ(p.exit_status(), 0);
}

// A thousand connections that send nothing delay no one: a request beside them is answered at once.
TEST(ServeTool, ThousandIdleConnectionsDelayNoOne) {
    if (rlimit lim{}; ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 1100) {
        lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 1100);
        ::setrlimit(RLIMIT_NOFILE, &lim);
        if (lim.rlim_cur < 1100) GTEST_SKIP() << "this process may open only " << lim.rlim_cur << " files";
    }
    Process p({"--port", "0", "-np", "1", "-c", "256", "-t", "1"});
    const std::string listening = p.wait_for("listening on http://127.0.0.1:");
    ASSERT_FALSE(listening.empty());
    const int port = std::stoi(listening.substr(listening.find("127.0.0.1:") + 10));
    std::vector<int> idle;
    for (int i = 0; i < 1000; ++i) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(static_cast<uint16_t>(port));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << "connection " << i;
        idle.push_back(fd);
    }
    const auto t0 = std::chrono::steady_clock::now();
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(60, 0);
    auto res = c.Post("/v1/completions", R"({"prompt": "Once", "max_tokens": 4})", "application/json");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    // Queued behind them, it would wait for their 5 s read timeouts, round after round of the
    // HTTP threads (about 80 s with 64); a sanitizer build needs a few seconds to start 1024 threads.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15)) << "queued behind the idle connections";
    for (int fd : idle) ::close(fd);
    ::kill(p.pid, SIGTERM);
    EXPECT_EQ(p.exit_status(), 0);
}

TEST(ServeTool, SigtermCancelsAndExitsZero) { stops_cleanly_on(SIGTERM); }
TEST(ServeTool, SigintCancelsAndExitsZero) { stops_cleanly_on(SIGINT); }

}  // namespace
