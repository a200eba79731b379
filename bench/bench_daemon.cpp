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
#include <sys/vfs.h>
#include <system_error>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "support/socket_probe.hpp"

namespace handoff::bench {

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

void add_daemon_options(CLI::App& app, daemon_options& options, const char* argv0, const std::string& dir_help) {
  options.dir = std::filesystem::path(argv0).parent_path() / "bench-data";
  app.add_option("--handoffd", options.handoffd, "handoffd to run")->capture_default_str();
  app.add_option("--dir", options.dir, dir_help)->capture_default_str();
}

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
  if (!process_) return;
  process_->signal(SIGTERM);
  if (!process_->wait_within(std::chrono::seconds(10))) process_->kill_hard();
}

void bench_daemon::start() {
  launch();
  wait_listening();
}

std::chrono::steady_clock::time_point bench_daemon::launch() {
  if (running()) throw std::logic_error("handoffd is already running");
  std::vector<std::string> args = {handoffd_.string(),   "--socket",     socket_.string(),
                                   "--artifact-dir",     artifact_dir().string(),
                                   "--queue-dir",        queue_dir().string()};
  args.insert(args.end(), extra_.begin(), extra_.end());
  process_.emplace(test::logged(std::move(args), dir_.path() / "handoffd.log"));
  return process_->started_at();
}

void bench_daemon::wait_listening() {
  const std::string log = (dir_.path() / "handoffd.log").string();
  for (int i = 0; i < 3000; ++i) {
    if (test::socket_accepts(socket_)) return;
    if (!running()) throw std::runtime_error("handoffd exited at start; see " + log);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Not left running behind us: a constructor that throws leaves no destructor to stop it.
  kill_hard();
  throw std::runtime_error("handoffd did not listen within 30 s; see " + log);
}

bool bench_daemon::running() { return process_ && process_->running(); }

void bench_daemon::kill_hard() { process_.reset(); }

void bench_daemon::stop() {
  if (!process_) return;
  process_->stop(SIGTERM, std::chrono::seconds(60));
  process_.reset();
}

void bench_daemon::restart() {
  stop();
  start();
}

}  // namespace handoff::bench
