// `run -i` as a person uses it at a keyboard: on a pseudo-terminal (readline, Ctrl-C,
// Ctrl-D). Piped input is tested with the other `run` tests.
#include "shared_data.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <pty.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <poll.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A child process on the slave side of a pty; the test types on the master side and reads
// everything the terminal shows.
class Terminal {
public:
    explicit Terminal(const std::vector<std::string>& args) {
        std::vector<char*> argv;
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
        if (pid_ == 0) {
            ::setenv("TERM", "dumb", 1);
            ::execv(argv[0], argv.data());
            std::_Exit(127);
        }
    }
    ~Terminal() {
        if (pid_ > 0 && !exited_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (fd_ >= 0) ::close(fd_);
    }
    bool started() const { return pid_ > 0; }
    const std::string& screen() const { return screen_; }

    void type(std::string_view keys) { ASSERT_EQ(::write(fd_, keys.data(), keys.size()), static_cast<ssize_t>(keys.size())); }

    // Reads until `text` shows at or after `from`; returns its offset, or npos on timeout.
    size_t wait_for(std::string_view text, size_t from, std::chrono::seconds timeout = 120s) {
        const auto deadline = Clock::now() + timeout;
        while (true) {
            const size_t at = screen_.find(text, from);
            if (at != std::string::npos) return at;
            if (Clock::now() > deadline || !read_some(deadline)) return std::string::npos;
        }
    }
    // Reads until the screen holds at least n more bytes than at `from`.
    bool wait_for_bytes(size_t from, size_t n, std::chrono::seconds timeout = 120s) {
        const auto deadline = Clock::now() + timeout;
        while (screen_.size() < from + n)
            if (!read_some(deadline)) return false;
        return true;
    }
    // Waits for the child to end, reading what it still prints; its exit code, or -1.
    int wait_exit(std::chrono::seconds timeout = 60s) {
        const auto deadline = Clock::now() + timeout;
        while (Clock::now() < deadline) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                exited_ = true;
                while (read_some(Clock::now() + 200ms)) {
                }
                return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            }
            read_some(Clock::now() + 50ms);
        }
        return -1;
    }

private:
    bool read_some(Clock::time_point deadline) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::max<long>(left, 0))) <= 0) return false;
        std::array<char, 4096> buf;
        const ssize_t n = ::read(fd_, buf.data(), buf.size());
        if (n <= 0) return false;  // EIO once the child has closed the terminal
        screen_.append(buf.data(), static_cast<size_t>(n));
        return true;
    }

    pid_t pid_ = -1;
    int fd_ = -1;
    bool exited_ = false;
    std::string screen_;
};

const std::string kRun = std::string(POCKET_BIN_DIR) + "/run";

}  // namespace

// Two turns, each stopped by Ctrl-C in the middle of its answer (--ignore-eos on a small
// context with context shift: the answers never end by themselves, so the Ctrl-C always
// lands mid-answer), then Ctrl-D at the prompt leaves cleanly.
TEST(ChatTerminal, TwoTurnsCtrlCMidAnswerThenCtrlD) {
    Terminal term({kRun, "-i", "--ignore-eos", "-c", "128", "-t", "1", "-s", "7"});
    ASSERT_TRUE(term.started());
    size_t at = term.wait_for("> ", 0);
    ASSERT_NE(at, std::string::npos) << term.screen();
    for (const char* message : {"Once upon a time", "Tell me more"}) {
        SCOPED_TRACE(message);
        term.type(std::string(message) + "\r");
        const size_t echoed = term.wait_for(message, at);
        ASSERT_NE(echoed, std::string::npos) << term.screen();
        // The answer streams: wait for a good part of it, then interrupt it.
        ASSERT_TRUE(term.wait_for_bytes(echoed + std::string_view(message).size(), 300)) << term.screen();
        term.type("\x03");
        const size_t stopped = term.wait_for("(stopped)", echoed);
        ASSERT_NE(stopped, std::string::npos) << term.screen();
        at = term.wait_for("> ", stopped);
        ASSERT_NE(at, std::string::npos) << "no prompt after Ctrl-C:\n" << term.screen();
    }
    term.type("\x04");  // Ctrl-D at an empty prompt
    EXPECT_EQ(term.wait_exit(), 0) << term.screen();
}

TEST(ChatTerminal, CtrlCAtAnEmptyPromptLeaves) {
    Terminal term({kRun, "-i", "-t", "1"});
    ASSERT_TRUE(term.started());
    ASSERT_NE(term.wait_for("> ", 0), std::string::npos) << term.screen();
    term.type("/help\r");
    ASSERT_NE(term.wait_for("/clear", 0), std::string::npos) << term.screen();
    term.type("\x03");
    EXPECT_EQ(term.wait_exit(), 0) << term.screen();
}

// perplexity with stdout and stderr on one terminal: every chunk's value stays visible (no
// "\r" status line over them), and the ETA is printed once after the first chunk.
TEST(PerplexityTerminal, ChunkValuesStayVisibleWithAnEta) {
    const std::string readme = (pocket::test::source_dir() / "README.md").string();
    const std::string model = (pocket::test::source_dir() / "models" / "stories260K.gguf").string();
    Terminal term({std::string(POCKET_BIN_DIR) + "/perplexity", "-m", model, "-f", readme, "-c", "64", "-b", "64", "--chunks", "4", "-t", "1"});
    ASSERT_TRUE(term.started());
    EXPECT_EQ(term.wait_exit(), 0) << term.screen();
    const std::string& s = term.screen();
    for (const char* chunk : {"[1]", "[2]", "[3]", "[4]"}) EXPECT_NE(s.find(chunk), std::string::npos) << chunk << "\n" << s;
    EXPECT_NE(s.find("s per chunk, ETA "), std::string::npos) << s;
    for (size_t at = s.find('\r'); at != std::string::npos; at = s.find('\r', at + 1))
        EXPECT_EQ(s.substr(at, 2), "\r\n") << "a carriage return that overwrites a line:\n" << s;
}
