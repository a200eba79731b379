// A real handoffd on a temporary socket with temporary store and queue directories.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace handoff::test {

class daemon_process {
 public:
  // Starts handoffd with the given extra options (an "--artifact-dir DIR" among them replaces
  // the temporary store) and waits until its socket accepts, at most `start_timeout` (here and
  // in every start(); a test that restarts it hundreds of times on a loaded machine wants more
  // than the default).
  explicit daemon_process(std::vector<std::string> extra_args = {},
                          std::chrono::milliseconds start_timeout = std::chrono::seconds(5));
  ~daemon_process();
  daemon_process(const daemon_process&) = delete;
  daemon_process& operator=(const daemon_process&) = delete;

  void start();                      // (re)starts on the same directories
  void kill_hard();                  // SIGKILL, reaped
  int stop();                        // SIGTERM; returns the exit status (or -signal)
  bool running() const noexcept { return pid() > 0; }
  pid_t pid() const noexcept { return process_ ? process_->pid() : -1; }  // the running daemon's, or -1

  const std::filesystem::path& socket() const noexcept { return socket_; }
  const std::filesystem::path& artifact_dir() const noexcept { return artifacts_; }
  const std::filesystem::path& queue_dir() const noexcept { return queue_; }
  const std::filesystem::path& log_path() const noexcept { return log_; }
  std::string log() const;

 private:
  temp_dir dir_;
  std::filesystem::path socket_, artifacts_, queue_, log_;
  std::vector<std::string> extra_;
  std::optional<process> process_;
  std::chrono::milliseconds start_timeout_{5000};
};

}  // namespace handoff::test
