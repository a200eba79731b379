#include "bench_daemon.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace handoff::bench {
namespace {

bool socket_accepts(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// Waits for `pid` up to `limit`; true once reaped.
bool reap_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

process_memory read_memory(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  if (!in) throw std::runtime_error("process " + std::to_string(pid) + " is gone");
  const std::map<std::string_view, std::size_t process_memory::*> fields = {
      {"VmRSS:", &process_memory::rss_kib},
      {"VmHWM:", &process_memory::hwm_kib},
      {"RssAnon:", &process_memory::anon_kib},
      {"RssFile:", &process_memory::file_kib}};
  process_memory m;
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto it = fields.find(std::string_view(line).substr(0, colon + 1));
    if (it == fields.end()) continue;
    m.*(it->second) = std::strtoull(line.c_str() + colon + 1, nullptr, 10);
  }
  return m;
}

double cpu_seconds(pid_t pid) {
  const std::string path = pid == 0 ? "/proc/self/stat" : "/proc/" + std::to_string(pid) + "/stat";
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) throw std::runtime_error(path + " cannot be read");
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  unsigned long long user = 0, system = 0;
  for (int f = 3; f <= 15 && rest >> field; ++f) {
    if (f == 14) user = std::stoull(field);
    if (f == 15) system = std::stoull(field);
  }
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

std::string filesystem_type(const std::filesystem::path& path) {
  struct statfs fs {};
  if (::statfs(path.c_str(), &fs) != 0) return "unknown";
  switch (static_cast<unsigned long>(fs.f_type)) {
    case 0xEF53UL: return "ext4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x01021994UL: return "tmpfs";
    case 0x794C7630UL: return "overlayfs";
    default: break;
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(fs.f_type));
  return hex;
}

std::filesystem::path default_handoffd() { return HANDOFF_BENCH_HANDOFFD; }

scratch_dir::scratch_dir(const std::filesystem::path& base, const std::string& prefix) {
  std::filesystem::create_directories(base);
  std::string tmpl = (std::filesystem::absolute(base) / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::system_error(errno, std::generic_category(), "mkdtemp in " + base.string());
  path_ = tmpl;
}

scratch_dir::~scratch_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

bench_daemon::bench_daemon(std::filesystem::path handoffd, const std::filesystem::path& base,
                           std::vector<std::string> extra_args)
    : handoffd_(std::move(handoffd)),
      dir_(base, "handoff-bench"),
      socket_(dir_.path() / "run" / "handoffd.sock"),
      extra_(std::move(extra_args)) {
  std::filesystem::create_directory(dir_.path() / "run");
  std::filesystem::permissions(dir_.path() / "run", std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace);
  start();
}

bench_daemon::~bench_daemon() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!reap_within(pid_, std::chrono::seconds(10))) {
    ::kill(pid_, SIGKILL);
    reap_within(pid_, std::chrono::seconds(10));
  }
}

void bench_daemon::start() {
  launch();
  wait_listening();
}

std::chrono::steady_clock::time_point bench_daemon::launch() {
  if (pid_ > 0) throw std::logic_error("handoffd is already running");
  std::vector<std::string> args = {handoffd_.string(),   "--socket",     socket_.string(),
                                   "--artifact-dir",     artifact_dir().string(),
                                   "--queue-dir",        queue_dir().string()};
  args.insert(args.end(), extra_.begin(), extra_.end());
  const std::string log = (dir_.path() / "handoffd.log").string();
  const auto launched_at = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd >= 0) {
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
  return launched_at;
}

void bench_daemon::wait_listening() {
  const std::string log = (dir_.path() / "handoffd.log").string();
  for (int i = 0; i < 3000; ++i) {
    if (socket_accepts(socket_)) return;
    if (!running()) throw std::runtime_error("handoffd exited at start; see " + log);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Not left running behind us: a constructor that throws leaves no destructor to stop it.
  kill_hard();
  throw std::runtime_error("handoffd did not listen within 30 s; see " + log);
}

bool bench_daemon::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
  pid_ = -1;
  return false;
}

void bench_daemon::kill_hard() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void bench_daemon::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  if (!reap_within(pid_, std::chrono::seconds(60))) {
    ::kill(pid_, SIGKILL);
    reap_within(pid_, std::chrono::seconds(10));
  }
  pid_ = -1;
}

void bench_daemon::restart() {
  stop();
  start();
}

}  // namespace handoff::bench
