#include "pocket/output_file.hpp"

#include "pocket/error.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pocket {
namespace {

namespace fs = std::filesystem;

// The registry a signal handler reads: fixed slots (no allocation, no lock), a slot's path
// written before its flag is set and the flag cleared before the slot is reused.
constexpr size_t kSlots = 16;
constexpr size_t kPathMax = 4096;
struct Slot {
    std::atomic<int> state{0};  // 0 free, 1 being written, 2 holds a temporary
    char path[kPathMax];
};
Slot g_slots[kSlots];

void register_temporary(const std::string& path) {
    if (path.size() >= kPathMax) return;  // not cleaned on a signal; still removed on errors
    for (auto& s : g_slots) {
        int expected = 0;
        if (!s.state.compare_exchange_strong(expected, 1)) continue;
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.state.store(2);
        return;
    }
}

extern "C" void remove_and_exit(int sig) {
    for (auto& s : g_slots)
        if (s.state.load() == 2) ::unlink(s.path);  // async-signal-safe
    ::_exit(128 + sig);
}

// SIGINT and SIGTERM held off while a temporary is created and registered, so that none
// exists unregistered.
class SignalsBlocked {
public:
    SignalsBlocked() {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGTERM);
        ::pthread_sigmask(SIG_BLOCK, &set, &old_);
    }
    ~SignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

private:
    sigset_t old_;
};

}  // namespace

void check_output_file(const std::string& output, std::initializer_list<std::string_view> inputs) {
    if (output.empty()) throw Error("the output file name is empty");
    std::error_code ec;
    for (std::string_view in : inputs) {
        if (in.empty()) continue;
        if (fs::equivalent(fs::path(in), fs::path(output), ec))
            throw Error("{}: is the input {} too (same file); writing it would destroy the input", output, in);
    }
    if (fs::is_directory(fs::path(output), ec)) throw Error("{}: is a directory, not a file name", output);
    fs::path dir = fs::path(output).parent_path();
    if (dir.empty()) dir = ".";
    if (!fs::is_directory(dir, ec)) throw Error("{}: the directory {} does not exist", output, dir.string());
    // The temporary is created in the target's directory: it must be writable even to
    // replace an existing file.
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        throw Error("{}: cannot write in the directory {}: {}", output, dir.string(), std::strerror(errno));
}

int create_temporary_beside(const std::string& target, std::string& tmp_path) {
    const fs::path t(target);
    std::string tmpl = (t.parent_path() / ("." + t.filename().string() + ".tmp.XXXXXX")).string();
    int fd;
    {
        SignalsBlocked blocked;
        fd = ::mkstemp(tmpl.data());
        if (fd < 0) throw Error("{}: cannot create a temporary file beside it: {}", target, std::strerror(errno));
        register_temporary(tmpl);
    }
    // mkstemp makes the file 0600; give the result the mode a plain create would have.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd, 0666 & ~mask);
    tmp_path = tmpl;
    return fd;
}

void forget_temporary(const std::string& tmp_path) noexcept {
    for (auto& s : g_slots)
        if (s.state.load() == 2 && tmp_path == s.path) {
            s.state.store(0);
            return;
        }
}

void remove_temporaries_on_signals() {
    struct sigaction sa{};
    sa.sa_handler = remove_and_exit;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace pocket
