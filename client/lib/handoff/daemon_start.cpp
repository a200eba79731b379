#include "handoff/daemon_start.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "handoff/client_error.hpp"
#include "protocol/default_paths.hpp"

extern char** environ;

namespace handoff::client {
namespace {

using std::chrono::milliseconds;

// After a handoffd exits 3 (another one holds the lock: starting, or finishing an idle exit),
// how often to try the socket, and how long before starting one again.
constexpr milliseconds lock_held_poll{10};
constexpr milliseconds lock_held_patience{500};

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::optional<milliseconds> env_ms(const char* name) {
  const std::string text = env_or_empty(name);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > 30ULL * 24 * 3600 * 1000)
    return std::nullopt;
  return milliseconds(value);
}

bool executable(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::filesystem::path find_daemon() {
  if (const std::string named = env_or_empty("HANDOFF_DAEMON"); !named.empty()) return named;
  if (const auto self = rpc::own_executable(); !self.empty()) {
    for (const auto& candidate : {self.parent_path() / "handoffd", self.parent_path() / ".." / "daemon" / "handoffd"})
      if (executable(candidate)) return candidate.lexically_normal();
  }
  const std::string path = env_or_empty("PATH");
  for (std::size_t begin = 0; begin <= path.size();) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    const std::filesystem::path dir = path.substr(begin, end - begin);
    if (dir.is_absolute() && executable(dir / "handoffd")) return dir / "handoffd";
    begin = end + 1;
  }
  return {};
}

struct start_result {
  int status = -1;      // handoffd's exit status; -1: it could not be run or did not exit in time
  std::string said;     // its stderr (its reason, when it did not start)
};

// Runs `handoffd --background ...` and waits (until `until`) for it to exit: it does once the
// detached daemon listens (0), or when it will not start (3: another holds the lock; 1, 2).
start_result run_background(const autostart& how, const std::filesystem::path& socket, clock::time_point until) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return {-1, std::string("pipe: ") + std::strerror(errno)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, ends[1], STDERR_FILENO);
  const std::string daemon = how.daemon.string();
  std::vector<std::string> args = {daemon, "--background", "--socket=" + socket.string(),
                                   "--idle-exit-ms=" + std::to_string(how.idle_exit.count())};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, daemon.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(ends[1]);
  if (rc != 0) {
    ::close(ends[0]);
    return {-1, "cannot run " + daemon + ": " + std::strerror(rc)};
  }
  start_result result;
  char buffer[1024];
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - clock::now()).count();
    if (left <= 0) break;
    pollfd p{ends[0], POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    const ssize_t got = ::read(ends[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (result.said.size() < 4096) result.said.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(ends[0]);
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, clock::now() < until ? 0 : WNOHANG)) < 0 && errno == EINTR) {}
  if (done == pid && WIFEXITED(status)) result.status = WEXITSTATUS(status);
  while (!result.said.empty() && (result.said.back() == '\n' || result.said.back() == ' '))
    result.said.pop_back();
  return result;
}

std::optional<unix_stream> try_connect(const std::filesystem::path& socket) {
  try {
    return unix_stream::connect(socket);
  } catch (const client_error& e) {
    if (e.kind() != error_kind::daemon_absent) throw;
    return std::nullopt;
  }
}

}  // namespace

std::optional<autostart> autostart_from_environment() {
  if (env_or_empty("HANDOFF_AUTOSTART") == "0") return std::nullopt;
  autostart how;
  how.daemon = find_daemon();
  if (how.daemon.empty()) return std::nullopt;
  if (const auto idle = env_ms("HANDOFF_IDLE_EXIT_MS")) how.idle_exit = *idle;
  if (const auto timeout = env_ms("HANDOFF_AUTOSTART_TIMEOUT_MS")) how.timeout = *timeout;
  return how;
}

unix_stream connect_or_start(const std::filesystem::path& socket, const autostart& how) {
  if (auto stream = try_connect(socket)) return std::move(*stream);
  const auto until = clock::now() + how.timeout;
  std::string last = "it did not answer in time";
  while (clock::now() < until) {
    const start_result started = run_background(how, socket, until);
    if (started.status == 0) {
      if (auto stream = try_connect(socket)) return std::move(*stream);
      last = "it started but " + socket.string() + " did not answer";
      continue;  // it exited at once (an idle exit of 0 ms, say): start another
    }
    if (started.status != 3) {
      last = started.said.empty() ? "it exited with status " + std::to_string(started.status) : started.said;
      break;
    }
    // Another handoffd holds the socket: one that is starting listens soon, one finishing an
    // idle exit is gone soon, and then this loop starts the next.
    last = started.said;
    const auto patience = std::min(until, clock::now() + lock_held_patience);
    while (clock::now() < patience) {
      if (auto stream = try_connect(socket)) return std::move(*stream);
      std::this_thread::sleep_for(lock_held_poll);
    }
  }
  throw client_error(error_kind::daemon_absent, "no handoffd at " + socket.string() + ", and starting " +
                                                    how.daemon.string() + " failed: " + last +
                                                    " (HANDOFF_AUTOSTART=0 turns starting off)");
}

}  // namespace handoff::client
