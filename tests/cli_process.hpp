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

extern char** environ;

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
      : input_(std::move(input)) {
    std::signal(SIGPIPE, SIG_IGN);  // a child that exits before reading its input must not kill us
    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    std::vector<std::string> argv_s = {HANDOFF_CLI_PATH};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<std::string> envp_s = environment_with(env);
    std::vector<char*> argv, envp;  // built before fork: nothing may allocate after it
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : envp_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      // As a command typed at a terminal starts: Ctrl-C and SIGTERM not ignored, whatever the
      // test runner passed down.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      for (const int signo : ignored) ::signal(signo, SIG_IGN);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
    for (int fd : {in_, out_, err_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (input_.empty()) close_fd(in_);
  }

  ~cli_process() {
    for (int* fd : {&in_, &out_, &err_}) close_fd(*fd);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  cli_process(const cli_process&) = delete;
  cli_process& operator=(const cli_process&) = delete;

  // Sends `signo` to the running process (SIGSTOP, SIGINT, ...).
  void signal(int signo) const {
    if (pid_ <= 0 || ::kill(pid_, signo) != 0) throw std::runtime_error("kill failed");
  }

  // Pumps the pipes until standard error holds `text`; false if the timeout passed first or
  // the process closed its standard error.
  bool wait_for_err(std::string_view text, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (result_.err.find(text) == std::string::npos) {
      if (err_ < 0 || !pump(deadline)) return false;
    }
    return true;
  }

  // Pumps the pipes until the process has closed its output and exited; kills it at the timeout
  // (status is then -SIGKILL).
  cli_result finish(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out_ >= 0 || err_ >= 0) {
      if (!pump(deadline)) {
        ::kill(pid_, SIGKILL);
        break;
      }
    }
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    result_.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    return result_;
  }

 private:
  static std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    for (const auto& change : changes) {
      const std::string name = change.substr(0, change.find('='));
      std::erase_if(env, [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; });
      if (change.find('=') != std::string::npos) env.push_back(change);
    }
    return env;
  }

  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // One poll round: writes input, reads output. False when the deadline passed.
  bool pump(std::chrono::steady_clock::time_point deadline) {
    using std::chrono::milliseconds;
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd fds[3] = {{in_, POLLOUT, 0}, {out_, POLLIN, 0}, {err_, POLLIN, 0}};
    if (::poll(fds, 3, static_cast<int>(left.count())) < 0 && errno != EINTR)
      throw std::runtime_error("poll failed");
    if (in_ >= 0 && fds[0].revents != 0) {
      const ssize_t n = ::write(in_, input_.data() + written_, input_.size() - written_);
      if (n > 0) written_ += static_cast<std::size_t>(n);
      if ((n < 0 && errno != EAGAIN) || written_ == input_.size()) close_fd(in_);
    }
    drain(fds[1], out_, result_.out);
    drain(fds[2], err_, result_.err);
    return true;
  }

  static void drain(const pollfd& p, int& fd, std::string& into) {
    if (fd < 0 || p.revents == 0) return;
    char chunk[65536];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) into.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EAGAIN) close_fd(fd);
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string input_;
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
