// A handoffd under benchmark: the daemon binary started on a temporary socket, with its
// artifact store and durable queue in a fresh directory under `base`, and its memory read from
// /proc/<pid>/status. The base directory should be on a real disk (the build directory, or /tmp
// when it is not a tmpfs): fsync costs are part of what the benchmarks measure.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "support/process.hpp"

namespace CLI {
class App;
}

namespace handoff::bench {

// A process's memory as the kernel reports it, KiB.
struct process_memory {
  std::size_t rss_kib = 0;       // VmRSS: resident now
  std::size_t hwm_kib = 0;       // VmHWM: peak resident since start
  std::size_t anon_kib = 0;      // RssAnon: heap, stacks (what pending texts must not fill)
  std::size_t file_kib = 0;      // RssFile: mapped files and the binary
};

// Reads /proc/<pid>/status. Throws std::runtime_error when the process is gone.
process_memory read_memory(pid_t pid);

// CPU time a process has used so far, all its threads, user + system, in seconds
// (/proc/<pid>/stat; 0 for the calling process itself). Throws when the process is gone.
double cpu_seconds(pid_t pid = 0);

// The file system type of `path` as statfs names it: "ext4", "xfs", "btrfs", "tmpfs", or hex.
std::string filesystem_type(const std::filesystem::path& path);

// The path of the handoffd this benchmark was built with (a Release build in the bench's own
// build directory).
std::filesystem::path default_handoffd();

// What every benchmark against a real handoffd is given: the daemon to run, and the directory
// (on a real disk) its store and queue go under.
struct daemon_options {
  std::filesystem::path handoffd = default_handoffd();  // --handoffd: the one built with the bench
  std::filesystem::path dir;                            // --dir: default bench-data beside the bench
};
// Adds --handoffd and --dir to `app`, `dir` defaulting to bench-data beside `argv0`.
void add_daemon_options(CLI::App& app, daemon_options& options, const char* argv0,
                        const std::string& dir_help = "Directory (on a real disk) for the daemon's store and queue");

// A temporary directory made with mkdtemp, removed with its contents on destruction.
class scratch_dir {
 public:
  scratch_dir(const std::filesystem::path& base, const std::string& prefix);
  ~scratch_dir();
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

class bench_daemon {
 public:
  // Starts `handoffd` with `extra_args` after the path options; returns once its socket accepts.
  // Its log (default level) goes to <dir>/handoffd.log. Throws std::runtime_error on failure.
  bench_daemon(std::filesystem::path handoffd, const std::filesystem::path& base,
               std::vector<std::string> extra_args = {});
  ~bench_daemon();  // stops the daemon (SIGTERM, then SIGKILL) and removes its directory
  bench_daemon(const bench_daemon&) = delete;
  bench_daemon& operator=(const bench_daemon&) = delete;

  void restart();   // SIGTERM, wait, start again on the same directories (queue recovery)
  void stop();      // SIGTERM and wait; nothing to do when stopped
  void kill_hard(); // SIGKILL and reap: the next start recovers as after a crash

  // Start-up in two steps, for timing it: launch() forks and execs handoffd on the same
  // directories and returns the time just before the fork (the clock a restart is timed from);
  // wait_listening() returns once the socket accepts, and throws when handoffd exits or 30 s pass.
  std::chrono::steady_clock::time_point launch();
  void wait_listening();
  // True while the daemon runs; reaps it (and forgets its pid) once it has exited.
  bool running();

  pid_t pid() const noexcept { return process_ ? process_->pid() : -1; }
  process_memory memory() const { return read_memory(pid()); }
  double cpu() const { return cpu_seconds(pid()); }
  const std::filesystem::path& socket() const noexcept { return socket_; }
  const std::filesystem::path& dir() const noexcept { return dir_.path(); }
  std::filesystem::path artifact_dir() const { return dir_.path() / "artifacts"; }
  std::filesystem::path queue_dir() const { return dir_.path() / "queue"; }

 private:
  void start();

  std::filesystem::path handoffd_;
  scratch_dir dir_;
  std::filesystem::path socket_;
  std::vector<std::string> extra_;
  std::optional<test::process> process_;
};

}  // namespace handoff::bench
