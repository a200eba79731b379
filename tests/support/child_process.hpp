// A program started for a test with its own environment and, optionally, a descriptor placed
// at fd 3 (the socket-activation slot); its output goes to a log file. Killed at scope exit.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace handoff::test {

class child_process {
 public:
  struct spec {
    std::vector<std::string> argv;                         // argv[0] is the program's path
    std::vector<std::pair<std::string, std::string>> env;  // set (value) on top of ours
    std::vector<std::string> unset_env;                    // removed from ours
    std::filesystem::path log;                             // stdout and stderr
    int fd3 = -1;                                          // dup2'ed to fd 3 when >= 0
    bool env_pid_as_listen_pid = false;                    // LISTEN_PID=<the child's own pid>
  };

  explicit child_process(spec s) : log_(s.log) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) exec_child(s);  // never returns
    pid_ = pid;
  }
  ~child_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const noexcept { return pid_; }

  // Sends `signo` and waits; returns the exit status, or -signal when killed by one.
  int stop(int signo = SIGTERM) {
    ::kill(pid_, signo);
    return wait();
  }
  // Waits for the exit (at most `timeout`, then kills); returns as stop() does.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }
  // True when it has already exited (it is then reaped; exit_status() says how).
  bool exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    pid_ = -1;
    return true;
  }
  int exit_status() const noexcept { return exit_status_; }

  std::string log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  [[noreturn]] static void exec_child(spec& s) {
    const int log_fd = ::open(s.log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    if (s.fd3 >= 0) {
      if (s.fd3 == 3) {
        ::fcntl(3, F_SETFD, 0);  // keep it across exec
      } else {
        ::dup2(s.fd3, 3);
      }
    }
    for (const auto& name : s.unset_env) ::unsetenv(name.c_str());
    for (const auto& [name, value] : s.env) ::setenv(name.c_str(), value.c_str(), 1);
    if (s.env_pid_as_listen_pid) ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : s.argv) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }

  std::filesystem::path log_;
  pid_t pid_ = -1;
  int exit_status_ = -1;
};

}  // namespace handoff::test
