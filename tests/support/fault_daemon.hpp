// Support for the storage-fault and hostile-neighbour tests: a handoffd on directories the test
// chooses (a tmpfs, a directory it will swap), a strace that injects an errno into the
// daemon's system calls on one directory, and the daemon's resident memory.
// Header-only; needs HANDOFFD_PATH, which the process-level test executables define.
#pragma once

#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.hpp"
#include "support/fs_fixtures.hpp"
#include "support/socket_probe.hpp"

namespace handoff::test {

// Polls `done` every 10 ms until it holds or `timeout` passes; returns its last value.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A handoffd with its socket in `run_dir` and the store and queue where the test says. Killed
// (SIGKILL) at scope exit; restartable on the same directories.
class handoffd_at {
 public:
  struct dirs {
    std::filesystem::path run_dir;    // holds the socket and the log; must exist, 0700
    std::filesystem::path artifacts;  // --artifact-dir
    std::filesystem::path queue;      // --queue-dir
  };
  explicit handoffd_at(dirs d, std::vector<std::string> extra_args = {})
      : dirs_(std::move(d)), extra_(std::move(extra_args)) {
    start();
  }

  void start() {
    if (process_) throw std::logic_error("handoffd already running");
    child_process::spec s;
    s.argv = {HANDOFFD_PATH,     "--socket",          socket().string(), "--artifact-dir",
              dirs_.artifacts.string(), "--queue-dir", dirs_.queue.string(), "--log-level",
              "debug"};
    s.argv.insert(s.argv.end(), extra_.begin(), extra_.end());
    s.log = log_path();
    process_.emplace(std::move(s));
    // Generous: two cores shared with other builds, and a strace may be slowing it down.
    const bool up = eventually([&] { return socket_accepts(socket()) || process_->exited(); },
                               std::chrono::seconds(30));
    if (!up || process_->pid() < 0) {
      process_.reset();
      throw std::runtime_error("handoffd did not start listening; log:\n" + log());
    }
  }
  void kill_hard() {
    // Never stop() a reaped child: its pid is -1, and kill(-1) would signal everything.
    if (process_ && !process_->exited()) process_->stop(SIGKILL);
    process_.reset();
  }

  pid_t pid() const { return process_ ? process_->pid() : -1; }
  bool alive() { return process_ && !process_->exited(); }
  std::filesystem::path socket() const { return dirs_.run_dir / "handoffd.sock"; }
  std::filesystem::path log_path() const { return dirs_.run_dir / "handoffd.log"; }
  std::string log() const {
    std::ifstream in(log_path());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  dirs dirs_;
  std::vector<std::string> extra_;
  std::optional<child_process> process_;
};

// Makes every `syscall` of process `pid` (all its threads) whose fd or path argument is the
// directory `dir` fail with `error` (e.g. "EACCES"; or "signal=KILL": the process is killed as
// it enters the call; or "delay_exit=MICROSECONDS": the call succeeds that much later), by
// attaching strace; the fault ends when
// the object goes (strace detaches). Only calls made relative to a descriptor of `dir` itself,
// or naming it exactly, are hit: strace -P matches paths exactly, not by prefix.
// attached() is false, with why_not(), when strace is missing or may not trace the process.
class syscall_fault {
 public:
  syscall_fault(pid_t pid, const std::filesystem::path& dir, const std::string& syscall,
                const std::string& error, const std::filesystem::path& log) {
    if (::access("/usr/bin/strace", X_OK) != 0) {
      why_ = "strace is not installed";
      return;
    }
    child_process::spec s;
    s.argv = {"/usr/bin/strace", "-f", "-p", std::to_string(pid), "-P", dir.string(),
              "-e", "trace=" + syscall, "-e", "inject=" + syscall + ":" + (error.starts_with("signal=") || error.starts_with("delay_") ? error : "error=" + error)};
    s.log = log;
    strace_.emplace(std::move(s));
    // Attached once every thread of the daemon has strace as its tracer.
    attached_ = eventually([&] { return all_traced_by(pid, strace_->pid()) || strace_->exited(); },
                           std::chrono::seconds(20)) &&
                !strace_->exited();
    if (!attached_) {
      why_ = "strace could not attach: " + strace_->log();
      strace_.reset();
    }
  }
  ~syscall_fault() { end(); }
  syscall_fault(const syscall_fault&) = delete;
  syscall_fault& operator=(const syscall_fault&) = delete;

  bool attached() const noexcept { return attached_; }
  const std::string& why_not() const noexcept { return why_; }
  // strace's own record of what it injected.
  std::string log() const { return strace_ ? strace_->log() : std::string(); }
  // Detaches now (SIGINT: strace lets the process go and exits).
  void end() {
    if (strace_ && !strace_->exited()) strace_->stop(SIGINT);
    strace_.reset();
  }

 private:
  static bool all_traced_by(pid_t pid, pid_t tracer) {
    const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
    std::error_code ec;
    int seen = 0;
    for (const auto& t : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream status(t.path() / "status");
      std::string line;
      bool traced = false;
      while (std::getline(status, line)) {
        if (line.rfind("TracerPid:", 0) == 0) traced = std::stol(line.substr(10)) == tracer;
      }
      if (!traced) return false;
      ++seen;
    }
    return !ec && seen > 0;
  }

  std::optional<child_process> strace_;
  bool attached_ = false;
  std::string why_;
};

// VmRSS of a process, KiB; -1 when it cannot be read.
inline long vm_rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace handoff::test
