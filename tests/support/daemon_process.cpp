#include "support/daemon_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace handoff::test {
namespace {

bool socket_accepts(const std::filesystem::path& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

daemon_process::daemon_process(std::vector<std::string> extra_args, std::chrono::milliseconds start_timeout)
    : dir_("handoffd-test"),
      socket_(dir_ / "run/handoffd.sock"),
      artifacts_(dir_ / "artifacts"),
      queue_(dir_ / "queue"),
      log_(dir_ / "handoffd.log"),
      extra_(std::move(extra_args)),
      start_timeout_(start_timeout) {
  // "--artifact-dir DIR" among the extra args moves the store (another filesystem, say).
  if (auto it = std::find(extra_.begin(), extra_.end(), "--artifact-dir"); it != extra_.end() && it + 1 != extra_.end()) {
    artifacts_ = *(it + 1);
    extra_.erase(it, it + 2);
  }
  std::filesystem::create_directory(dir_ / "run");
  std::filesystem::permissions(dir_ / "run", std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
  start();
}

daemon_process::~daemon_process() {
  if (pid_ > 0) kill_hard();
}

void daemon_process::start() {
  if (pid_ > 0) throw std::logic_error("daemon already running");
  std::vector<std::string> args = {HANDOFFD_PATH,      "--socket",    socket_.string(),
                                   "--artifact-dir",   artifacts_.string(), "--queue-dir",
                                   queue_.string(),    "--log-level", "debug"};
  args.insert(args.end(), extra_.begin(), extra_.end());
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int log_fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (log_fd >= 0) {
      ::dup2(log_fd, 2);
      ::dup2(log_fd, 1);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  const auto deadline = std::chrono::steady_clock::now() + start_timeout_;
  while (std::chrono::steady_clock::now() < deadline) {
    if (socket_accepts(socket_)) return;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("handoffd exited at start; log:\n" + log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  throw std::runtime_error("handoffd did not start listening within " + std::to_string(start_timeout_.count()) +
                           " ms; log:\n" + log());
}

void daemon_process::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

int daemon_process::stop() {
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return -WTERMSIG(status);
}

std::string daemon_process::log() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace handoff::test
