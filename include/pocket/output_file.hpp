#pragma once
// What every tool that writes a file does before any work, and how its temporary files are
// made and cleaned up. One place, so that no tool can destroy an input or leave a partial file.
//
// - check_output_file: the output is none of the inputs (same inode, through symlinks and hard
//   links), is not a directory, and its directory exists and is writable.
// - Temporaries: a unique file beside the target (so the final rename is atomic), registered
//   so that SIGINT / SIGTERM remove it (once remove_temporaries_on_signals() is installed).
//   A file is only ever renamed onto the target when complete: SIGKILL may leave the
//   temporary, never a partial file under the target's name.
#include <initializer_list>
#include <string>
#include <string_view>

namespace pocket {

// Throws pocket::Error (one line naming `output`) when writing `output` would overwrite one
// of `inputs` (empty strings are skipped) or cannot succeed: a directory, a missing or
// read-only directory.
void check_output_file(const std::string& output, std::initializer_list<std::string_view> inputs);

// Creates a unique temporary file beside `target` (".NAME.tmp.XXXXXX", mode as a plain
// create would give) and registers it for removal on SIGINT / SIGTERM. Returns its fd and
// sets `tmp_path`. Throws pocket::Error naming `target` and the reason.
int create_temporary_beside(const std::string& target, std::string& tmp_path);

// The temporary was renamed into place or removed: no longer ours to clean up.
void forget_temporary(const std::string& tmp_path) noexcept;

// Installs SIGINT and SIGTERM handlers that remove every registered temporary and exit with
// 128 + the signal (130, 143), as a shell reports it. For tools that write files.
void remove_temporaries_on_signals();

}  // namespace pocket
