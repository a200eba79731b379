// A program started for a test with its own environment and, optionally, a descriptor placed
// at fd 3 (the socket-activation slot); its output goes to a log file. Killed at scope exit.
#pragma once

// The POSIX and standard headers this file has always brought its users.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
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

#include "support/process.hpp"

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

  explicit child_process(spec s) : log_(s.log), process_(launch(std::move(s))) {}

  pid_t pid() const noexcept { return process_.pid(); }

  // Sends `signo` and waits; returns the exit status, or -signal when killed by one.
  int stop(int signo = SIGTERM) {
    process_.signal(signo);
    return wait();
  }
  // Waits for the exit (at most `timeout`, then kills); returns as stop() does.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) { return process_.wait(timeout); }
  // True when it has already exited (it is then reaped; exit_status() says how).
  bool exited() { return !process_.running(); }
  int exit_status() const noexcept { return process_.status(); }

  std::string log() const { return read_log(log_); }

 private:
  static process_spec launch(spec s) {
    process_spec p = logged(std::move(s.argv), s.log);
    p.fd3 = s.fd3;
    p.listen_pid = s.env_pid_as_listen_pid;
    p.env = std::move(s.unset_env);
    for (auto& [name, value] : s.env) p.env.push_back(name + "=" + value);
    return p;
  }

  std::filesystem::path log_;
  process process_;
};

}  // namespace handoff::test
