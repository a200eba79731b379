#include "cli/harness/codex/codex_exec.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "engine/fs/posix_io.hpp"

extern char** environ;

namespace handoff::cli::codex {
namespace {

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

constexpr std::size_t max_event_line_bytes = 4 << 20;  // a longer `--json` event line is skipped
constexpr auto kill_grace = std::chrono::seconds(5);

// Splits stdout into lines for `on_line`, and skips those over max_event_line_bytes.
class line_reader {
 public:
  explicit line_reader(const std::function<void(std::string_view)>& on_line) : on_line_(on_line) {}
  void feed(std::string_view bytes) {
    pending_.append(bytes);
    for (std::size_t nl; (nl = pending_.find('\n')) != std::string::npos; pending_.erase(0, nl + 1))
      if (nl <= max_event_line_bytes) on_line_(std::string_view(pending_).substr(0, nl));
    if (pending_.size() > max_event_line_bytes) pending_.clear();
  }

 private:
  const std::function<void(std::string_view)>& on_line_;
  std::string pending_;
};

// In the forked child: only async-signal-safe calls until execve.
[[noreturn]] void become_codex(const exec_plan& plan, std::vector<char*>& argv, pid_t parent, int null, int out,
                               int err) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  if (::dup2(null, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0 || ::chdir(plan.cwd.c_str()) != 0) ::_exit(126);
  ::execve(argv[0], argv.data(), environ);
  ::_exit(127);
}

}  // namespace

std::vector<std::string> exec_argv(const fs::path& codex, const turn& t, const fs::path& last) {
  const child& c = *t.owner;
  std::vector<std::string> args = {codex.string(), "exec"};
  if (t.n > 1 && !c.thread.empty()) args.insert(args.end(), {"resume", c.thread});
  args.insert(args.end(), {"--json", "--skip-git-repo-check", "-o", last.string(),
                           // The child must not start handoff's own server again.
                           "-c", "mcp_servers.handoff.enabled=false"});
  if (t.n == 1 && !c.model.empty()) args.insert(args.end(), {"-m", c.model});
  args.push_back(t.prompt);
  return args;
}

exec_outcome run_codex_exec(const exec_plan& plan, const std::function<void(pid_t)>& on_start,
                            const std::function<void(std::string_view)>& on_line) {
  exec_outcome outcome;
  std::vector<std::string> args = plan.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // errno is taken at the call that failed, before any other call can change it.
  unique_fd err(::open(plan.stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!err) return {errno, 0, false};
  unique_fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!null) return {errno, 0, false};
  int ends[2] = {-1, -1};
  if (::pipe2(ends, O_CLOEXEC) != 0) return {errno, 0, false};
  const unique_fd out(ends[0]);
  unique_fd out_write(ends[1]);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) become_codex(plan, argv, parent, null.get(), out_write.get(), err.get());
  if (pid < 0) return {errno, 0, false};
  // EOF on `out` once the child and its descendants have closed theirs.
  out_write.reset();
  err.reset();
  null.reset();
  on_start(pid);

  const steady::time_point deadline = steady::now() + plan.timeout;
  std::optional<steady::time_point> killed_at;
  line_reader lines(on_line);
  bool open = true;
  for (;;) {
    // Reading stdout wakes this loop; once it is closed, a 100 ms tick still enforces the timeout.
    pollfd p{out.get(), POLLIN, 0};
    const int ready = ::poll(open ? &p : nullptr, open ? 1 : 0, open ? 500 : 100);
    if (ready > 0) {
      char buf[65536];
      const ssize_t n = ::read(out.get(), buf, sizeof buf);
      if (n > 0)
        lines.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      else if (!(n < 0 && errno == EINTR))
        open = false;
    }
    if (::waitpid(pid, &outcome.wait_status, WNOHANG) == pid) break;
    const steady::time_point now = steady::now();
    if (!killed_at && now >= deadline) {
      outcome.timed_out = true;
      ::kill(-pid, SIGTERM);
      killed_at = now;
    } else if (killed_at && now >= *killed_at + kill_grace) {
      ::kill(-pid, SIGKILL);
    }
  }
  ::kill(-pid, SIGKILL);  // whatever the child left running in its group
  return outcome;
}

}  // namespace handoff::cli::codex
