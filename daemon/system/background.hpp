// --background: handoffd detaching from the client that started it (docs/design.md §12,
// "Starting itself"). The client runs `handoffd --background ...` and waits for that process to
// exit; it exits once the detached daemon listens (0), or says why it will not (3: another
// handoffd already serves the socket; 1: anything else), so the client knows when to connect.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "engine/fs/posix_io.hpp"

namespace handoff::daemon {

// Exit statuses of handoffd.
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_already_serving = 3;

// The detached daemon's line back to the process waiting for it. Empty (and every call a no-op)
// in a daemon that did not detach.
class readiness {
 public:
  readiness() = default;
  explicit readiness(unique_fd pipe) : pipe_(std::move(pipe)) {}
  // The socket listens: the waiting process exits 0.
  void ready() noexcept;
  // It will not: the waiting process prints `why` and exits `status`.
  void failed(int status, std::string_view why) noexcept;

 private:
  unique_fd pipe_;
};

// Forks. The parent waits for the child's word and returns the status to exit with. The child
// (a new session, cwd /, umask 077, stdin /dev/null, stdout and stderr appended to `log_file`,
// which is moved to "<log_file>.1" first when over 8 MiB; every other fd closed) returns
// nullopt and fills `out`. Throws std::runtime_error when the log cannot be opened or fork fails.
std::optional<int> detach(const std::filesystem::path& log_file, readiness& out);

}  // namespace handoff::daemon
