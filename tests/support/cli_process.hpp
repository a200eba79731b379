// Runs the real `handoff` binary (HANDOFF_CLI_PATH) as a child process, for the CLI tests:
// arguments, bytes on standard input, standard output and error captured apart, exit status.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/process.hpp"

namespace handoff::test {

struct cli_result {
  int status = -1;  // exit status, or -signal when it was killed
  std::string out;  // standard output, bytes as written
  std::string err;  // standard error
};

class cli_process {
 public:
  // Starts `handoff args...`; `input` is written to its standard input, which is then closed.
  // `env` entries ("NAME=value", or "NAME" to unset it) change the inherited environment.
  // `ignored` signals start ignored (as a shell's background job starts with SIGINT ignored).
  explicit cli_process(const std::vector<std::string>& args, std::string input = {},
                       const std::vector<std::string>& env = {}, const std::vector<int>& ignored = {})
      : input_(std::move(input)), process_(launch(args, env, ignored)) {
    for (int fd : {process_.in_fd(), process_.out_fd(), process_.err_fd()})
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (input_.empty()) process_.close_in();
  }
  cli_process(const cli_process&) = delete;
  cli_process& operator=(const cli_process&) = delete;

  pid_t pid() const noexcept { return process_.pid(); }  // -1 once reaped

  // Sends `signo` to the running process (SIGSTOP, SIGINT, ...).
  void signal(int signo) const {
    if (process_.pid() <= 0 || ::kill(process_.pid(), signo) != 0) throw std::runtime_error("kill failed");
  }

  // Pumps the pipes until standard error holds `text`; false if the timeout passed first or
  // the process closed its standard error.
  bool wait_for_err(std::string_view text, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (result_.err.find(text) == std::string::npos) {
      if (process_.err_fd() < 0 || !pump(deadline)) return false;
    }
    return true;
  }

  // Pumps the pipes until the process has closed its output and exited; kills it at the timeout
  // (status is then -SIGKILL).
  cli_result finish(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (process_.out_fd() >= 0 || process_.err_fd() >= 0) {
      if (!pump(deadline)) {
        process_.signal(SIGKILL);
        break;
      }
    }
    result_.status = process_.wait();
    return result_;
  }

 private:
  static process_spec launch(const std::vector<std::string>& args, const std::vector<std::string>& env,
                             const std::vector<int>& ignored) {
    std::signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its input must not kill us
    process_spec spec;
    spec.env = env;
    spec.in = spec.out = spec.err = stream::pipe;
    // As a command typed at a terminal starts: Ctrl-C and SIGTERM not ignored, whatever the test
    // runner passed down.
    spec.default_signals = true;
    spec.ignored = ignored;
    spec.argv = {HANDOFF_CLI_PATH};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    return spec;
  }

  // One poll round: writes input, reads output. False when the deadline passed.
  bool pump(std::chrono::steady_clock::time_point deadline) {
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[3] = {{process_.in_fd(), POLLOUT, 0}, {process_.out_fd(), POLLIN, 0}, {process_.err_fd(), POLLIN, 0}};
    if (::poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR)
      throw std::runtime_error("poll failed");
    if (process_.in_fd() >= 0 && fds[0].revents != 0) {
      const ssize_t n = ::write(process_.in_fd(), input_.data() + written_, input_.size() - written_);
      if (n > 0) written_ += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN) || written_ == input_.size()) process_.close_in();
    }
    if (drain(fds[1], process_.out_fd(), result_.out)) process_.close_out();
    if (drain(fds[2], process_.err_fd(), result_.err)) process_.close_err();
    return true;
  }

  // Reads what is ready; true when the pipe is finished (end of file or an error).
  static bool drain(const pollfd& p, int fd, std::string& into) {
    if (fd < 0 || p.revents == 0) return false;
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) into.append(chunk, static_cast<std::size_t>(n));
    return n == 0 || (n < 0 && errno != EAGAIN);
  }

  std::string input_;
  process process_;
  std::size_t written_ = 0;
  cli_result result_;
};

// `handoff --socket SOCKET args...`: the global option first, as a script would write it.
inline std::vector<std::string> on_socket(const std::string& socket, std::vector<std::string> args) {
  args.insert(args.begin(), {"--socket", socket});
  return args;
}

// Runs `handoff args...` to its end.
inline cli_result run_cli(const std::vector<std::string>& args, std::string input = {},
                          const std::vector<std::string>& env = {}) {
  return cli_process(args, std::move(input), env).finish();
}

}  // namespace handoff::test
