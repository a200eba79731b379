// The one way tests and benchmarks start a program: fork and exec with its own arguments and
// environment, its standard streams inherited, on /dev/null, appended to a log file or on pipes,
// optionally a descriptor at fd 3 (the socket-activation slot); then signal it, wait for it with
// or without a deadline, and reap it. A process still running at scope exit is killed (SIGKILL)
// and reaped. Everything the child needs is built before the fork: nothing allocates after it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace handoff::test {

enum class stream {
  inherit,  // ours
  null,     // /dev/null
  log,      // appended to process_spec::log (created 0600)
  pipe,     // a pipe whose other end is ours: in_fd(), out_fd(), err_fd() (blocking, close-on-exec)
};

struct process_spec {
  std::vector<std::string> argv;   // argv[0] is the program's path
  std::vector<std::string> env;    // on top of ours, in order: "NAME=value" sets, "NAME" unsets
  stream in = stream::inherit;     // standard input
  stream out = stream::inherit;    // standard output
  stream err = stream::inherit;    // standard error
  std::filesystem::path log;       // for stream::log
  int fd3 = -1;                    // placed at fd 3 (kept across exec) when >= 0
  bool listen_pid = false;         // LISTEN_PID=<the child's own pid> (socket activation)
  bool default_signals = false;    // SIGINT and SIGTERM back to their defaults, as a shell's command
  std::vector<int> ignored;        // signals the program starts with ignored
};

// `argv` with standard output and error appended to `log`: how daemons run under test.
inline process_spec logged(std::vector<std::string> argv, std::filesystem::path log) {
  process_spec spec;
  spec.argv = std::move(argv);
  spec.out = stream::log;
  spec.err = stream::log;
  spec.log = std::move(log);
  return spec;
}

class process {
 public:
  // Forks and execs (exit status 127 when the exec fails). Throws std::system_error when the
  // pipes or the fork cannot be made.
  explicit process(process_spec spec);
  ~process();  // SIGKILL and reap when still running; closes our pipe ends
  process(const process&) = delete;
  process& operator=(const process&) = delete;

  pid_t pid() const noexcept { return pid_; }  // -1 once reaped
  // The clock just before the fork: what a start-up is timed from.
  std::chrono::steady_clock::time_point started_at() const noexcept { return started_at_; }

  // True while it runs; once it has exited it is reaped and status() says how.
  bool running();
  // Sends `signo` when it still runs.
  void signal(int signo) const;
  // Waits for the exit and reaps; returns status().
  int wait();
  // Waits at most `timeout`, then sends SIGKILL and reaps; returns status().
  int wait(std::chrono::milliseconds timeout);
  // Waits at most `timeout`; false (still running) when it passed.
  bool wait_within(std::chrono::milliseconds timeout);
  // `signo`, then wait() (or wait(timeout) when given).
  int stop(int signo = SIGTERM, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // SIGKILL and reap.
  void kill_hard();
  // The exit status, or -signal when a signal ended it; -1 until reaped.
  int status() const noexcept { return status_; }

  // Our ends of the pipes of stream::pipe (-1 otherwise). close_in() ends the program's input.
  int in_fd() const noexcept { return in_; }
  int out_fd() const noexcept { return out_; }
  int err_fd() const noexcept { return err_; }
  void close_in();
  void close_out();
  void close_err();

 private:
  void reaped(int raw_status);

  pid_t pid_ = -1;
  int status_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::chrono::steady_clock::time_point started_at_;
};

// Reads a whole file (a child's log); empty when it cannot be read.
std::string read_log(const std::filesystem::path& path);

}  // namespace handoff::test
