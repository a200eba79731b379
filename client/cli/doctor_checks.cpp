#include "cli/doctor_checks.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string_view>
#include <system_error>

#include "cli/byte_size.hpp"
#include "handoff/daemon_start.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;

finding ok(std::string text) { return {finding::level::ok, std::move(text)}; }
finding warn(std::string text) { return {finding::level::warn, std::move(text)}; }
finding fail(std::string text) { return {finding::level::fail, std::move(text)}; }

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// A path as a shell word: quoted when it holds anything a shell would split or expand.
std::string shell_word(const fs::path& p) {
  const std::string s = p.string();
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,=") ==
      std::string::npos)
    return s;
  std::string quoted = "'";
  for (char c : s) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// What is wrong with an entry that should be ours and private, or "" when nothing is.
std::string private_problem(const fs::path& p, const struct stat& st, mode_t wanted) {
  if (st.st_uid != ::geteuid())
    return shell_word(p) + " belongs to uid " + std::to_string(st.st_uid) + ", not to you (uid " +
           std::to_string(::geteuid()) + "): run chown " + std::to_string(::geteuid()) + " " + shell_word(p) +
           " (as root), or move it away";
  if ((st.st_mode & 077) != 0)
    return shell_word(p) + " is mode " + mode_text(st.st_mode) + ": run chmod " + mode_text(wanted).substr(1) +
           " " + shell_word(p);
  return {};
}

struct scan_result {
  std::size_t entries = 0;
  std::size_t bad = 0;
  std::string first;  // the first problem found
};

void scan(const fs::path& dir, int depth, scan_result& r) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;  // vanished meanwhile
    ++r.entries;
    const bool is_dir = S_ISDIR(st.st_mode);
    std::string problem = private_problem(p, st, is_dir ? 0700 : 0600);
    if (!problem.empty() && ++r.bad == 1) r.first = std::move(problem);
    if (is_dir && depth > 0) scan(p, depth - 1, r);
  }
}

// `program` is an executable file in one of $PATH's directories (absolute ones only: a relative
// one would depend on where doctor runs).
bool on_path(std::string_view program) {
  const char* env = std::getenv("PATH");
  const std::string_view path = env == nullptr ? "" : env;
  for (std::size_t begin = 0; begin <= path.size();) {
    const std::size_t end = std::min(path.find(':', begin), path.size());
    const fs::path candidate = fs::path(path.substr(begin, end - begin)) / program;
    struct stat st {};
    if (candidate.is_absolute() && ::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return true;
    begin = end + 1;
  }
  return false;
}

}  // namespace

finding check_private_dir(const fs::path& dir, const std::string& what, bool may_be_missing) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      const std::string text = what + " " + shell_word(dir) + " does not exist";
      return may_be_missing ? warn(text + " yet (handoffd creates it when it starts)")
                            : fail(text + ": start handoffd, which creates it");
    }
    return fail("cannot look at " + what + " " + shell_word(dir) + ": " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode))
    return fail(what + " " + shell_word(dir) + " is a symlink; handoffd refuses it: replace it with a real "
                "directory (mkdir -m 700), or point handoffd at the real one");
  if (!S_ISDIR(st.st_mode))
    return fail(what + " " + shell_word(dir) + " is not a directory: move it away and let handoffd create it");
  if (std::string problem = private_problem(dir, st, 0700); !problem.empty()) return fail(what + " " + problem);
  return ok(what + " " + shell_word(dir) + ": yours, mode 0700");
}

finding check_private_contents(const fs::path& dir, const std::string& what, int depth) {
  scan_result r;
  scan(dir, depth, r);
  if (r.bad == 0) return ok(what + " contents: " + std::to_string(r.entries) + " entries, all private");
  std::string text = std::to_string(r.bad) + " of " + std::to_string(r.entries) + " entries in " + what + " " +
                     shell_word(dir) + " are open to others or not yours; the first: " + r.first;
  if (r.bad > 1)
    text += " (to fix them all: find " + shell_word(dir) + " -type d -exec chmod 700 {} + -o -type f -exec chmod 600 {} +)";
  return fail(std::move(text));
}

finding check_socket_file(const fs::path& socket) {
  struct stat st {};
  if (::lstat(socket.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      // Not running is how a client-started daemon rests (docs/design.md §12).
      if (const auto start = client::autostart_from_environment())
        return ok("no daemon at " + shell_word(socket) + " now: the first client that needs one starts " +
                  shell_word(start->daemon.string()));
      return fail("no socket at " + shell_word(socket) + ": start the daemon with systemctl --user enable --now "
                  "handoffd.socket (or run handoffd; starting it from clients is off: HANDOFF_AUTOSTART=0, or no "
                  "handoffd found)");
    }
    return fail("cannot look at the socket " + shell_word(socket) + ": " + std::strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode))
    return fail(shell_word(socket) + " is not a socket: remove it (rm " + shell_word(socket) +
                ") and start handoffd again");
  if (std::string problem = private_problem(socket, st, 0600); !problem.empty()) {
    // Others cannot reach it through a private directory, and handoffd checks every peer's uid,
    // but a socket open to others is still not what handoffd makes.
    return warn("socket " + problem);
  }
  return ok("socket " + shell_word(socket) + ": yours, mode 0600");
}

finding check_free_space(const fs::path& path, const std::string& what) {
  constexpr std::uint64_t min_free_bytes = std::uint64_t{1} << 30;
  constexpr double min_free_share = 0.05;
  fs::path probe = path;
  struct statvfs vfs {};
  while (::statvfs(probe.c_str(), &vfs) != 0) {
    if (errno != ENOENT || !probe.has_relative_path()) return fail("cannot measure free space for " + what + " " +
                                                                    shell_word(path) + ": " + std::strerror(errno));
    probe = probe.parent_path();
  }
  const std::uint64_t unit = vfs.f_frsize;
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(vfs.f_bavail) * unit;
  const std::uint64_t total_bytes = static_cast<std::uint64_t>(vfs.f_blocks) * unit;
  const double share = total_bytes == 0 ? 1.0 : static_cast<double>(free_bytes) / static_cast<double>(total_bytes);
  char percent[16];
  std::snprintf(percent, sizeof percent, "%.0f%%", share * 100);
  const std::string text = format_byte_size(free_bytes) + " free (" + percent + ") on the filesystem of " + what +
                           " " + shell_word(path);
  if (free_bytes < min_free_bytes || share < min_free_share)
    return warn("only " + text + ": artifacts that cannot be saved are delivered without their full text; "
                "free some space, or run handoff gc");
  return ok(text);
}

std::optional<finding> check_harness_setup(const harness& h) {
  if (!on_path(h.program)) return std::nullopt;
  const std::string name(h.name);
  // The very options `handoff setup NAME --check` parses, so that doctor checks what that does.
  CLI::App app;
  const setup_fn run = h.add_setup(app);
  setup_report report(/*quiet=*/true);
  int status = exit_ok;
  try {
    app.parse(std::vector<std::string>{"--check"});
    status = run(report);
  } catch (const std::exception& e) {
    report.failed(name, e.what(), exit_failure);
  }
  if (!report.failure().empty())
    return warn(name + " is on the PATH but handoff's setup for it cannot be checked: " + report.failure());
  if (status != exit_ok)
    return warn(name + " is on the PATH but handoff is not set up for it: run handoff setup " + name);
  std::string paths;
  for (const setup_finding& f : report.findings()) paths += (paths.empty() ? "" : ", ") + shell_word(f.path);
  return ok(name + ": handoff is set up (" + paths + ")");
}

}  // namespace handoff::cli
