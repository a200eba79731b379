#include "support/process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>
#include <thread>

extern char** environ;

namespace handoff::test {
namespace {

// Our environment with `changes` applied ("NAME=value" sets, "NAME" unsets).
std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  for (const auto& change : changes) {
    const std::string name = change.substr(0, change.find('='));
    std::erase_if(env, [&](const std::string& e) { return e.compare(0, name.size() + 1, name + "=") == 0; });
    if (change.find('=') != std::string::npos) env.push_back(change);
  }
  return env;
}

// In the child: `fd` becomes `target`, open across exec.
void place(int fd, int target) {
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);
  } else {
    ::dup2(fd, target);
  }
}

// In the child: the descriptor a stream::null or stream::log stream opens, or -1.
int open_for(stream s, int target, const char* log) {
  if (s == stream::null) return ::open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
  if (s == stream::log) return ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  return -1;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

process::process(process_spec spec) {
  // Pipes: [0] is the read end, [1] the write end; the child's end of each is placed at 0, 1 or 2.
  int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  const stream streams[3] = {spec.in, spec.out, spec.err};
  for (int i = 0; i < 3; ++i) {
    if (streams[i] == stream::pipe && ::pipe2(pipes[i], O_CLOEXEC) != 0)
      throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  std::vector<std::string> env = environment_with(spec.env);
  char* listen_pid = nullptr;  // "LISTEN_PID=" and room for the child's pid, filled in the child
  if (spec.listen_pid) {
    std::erase_if(env, [](const std::string& e) { return e.starts_with("LISTEN_PID="); });
    env.push_back("LISTEN_PID=" + std::string(20, '\0'));
    listen_pid = env.back().data() + std::strlen("LISTEN_PID=");
  }
  std::vector<char*> argv, envp;
  for (auto& a : spec.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const char* log = spec.log.c_str();

  started_at_ = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    if (spec.default_signals) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
    }
    for (const int signo : spec.ignored) ::signal(signo, SIG_IGN);
    for (int i = 0; i < 3; ++i) {
      if (streams[i] == stream::pipe) place(pipes[i][i == 0 ? 0 : 1], i);
      const int fd = open_for(streams[i], i, log);
      if (fd >= 0) place(fd, i);
    }
    if (spec.fd3 >= 0) place(spec.fd3, 3);
    if (listen_pid != nullptr) {  // the pid's digits, without allocating
      char digits[20];
      int n = 0;
      for (pid_t p = ::getpid(); p > 0; p /= 10) digits[n++] = static_cast<char>('0' + p % 10);
      for (int i = 0; i < n; ++i) listen_pid[i] = digits[n - 1 - i];
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  pid_ = pid;
  for (int i = 0; i < 3; ++i) {
    if (streams[i] != stream::pipe) continue;
    const bool ours_reads = i != 0;
    ::close(pipes[i][ours_reads ? 1 : 0]);
    (i == 0 ? in_ : i == 1 ? out_ : err_) = pipes[i][ours_reads ? 0 : 1];
  }
}

process::~process() {
  close_in();
  close_out();
  close_err();
  kill_hard();
}

void process::reaped(int raw_status) {
  pid_ = -1;
  status_ = WIFEXITED(raw_status) ? WEXITSTATUS(raw_status) : -WTERMSIG(raw_status);
}

bool process::running() {
  if (pid_ <= 0) return false;
  int raw = 0;
  const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
  if (r == pid_) {
    reaped(raw);
    return false;
  }
  if (r < 0 && errno == ECHILD) {  // reaped elsewhere
    pid_ = -1;
    return false;
  }
  return true;
}

void process::signal(int signo) const {
  if (pid_ > 0) ::kill(pid_, signo);
}

int process::wait() {
  if (pid_ <= 0) return status_;
  int raw = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &raw, 0)) < 0 && errno == EINTR) {
  }
  if (r == pid_) {
    reaped(raw);
  } else {
    pid_ = -1;
  }
  return status_;
}

bool process::wait_within(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int process::wait(std::chrono::milliseconds timeout) {
  if (!wait_within(timeout)) kill_hard();
  return status_;
}

int process::stop(int signo, std::optional<std::chrono::milliseconds> timeout) {
  signal(signo);
  return timeout ? wait(*timeout) : wait();
}

void process::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  wait();
}

void process::close_in() { close_fd(in_); }
void process::close_out() { close_fd(out_); }
void process::close_err() { close_fd(err_); }

std::string read_log(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace handoff::test
