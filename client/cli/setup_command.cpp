#include "cli/setup_command.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/claude_code_settings.hpp"
#include "cli/daemon_command.hpp"
#include "engine/projection_notice.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct setup_options {
  std::string project;       // --project DIR: DIR/.claude/settings.json instead of the user's
  std::string artifact_dir;  // --artifact-dir: the store to allow Read in [handoffd's default]
  bool remove = false;
  bool dry_run = false;
  bool foreground_agents = false;
};

// The file's text, or nullopt when it does not exist. Throws std::runtime_error on anything else
// (a symlink, not a regular file, unreadable).
std::optional<std::string> read_settings(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP) throw std::runtime_error(path.string() + " is a symlink; handoff edits only a regular file");
    throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st{};
  std::string text;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(path.string() + " is not a regular file");
  }
  if (st.st_size > 16 << 20) {
    ::close(fd);
    throw std::runtime_error(path.string() + " is over 16 MiB; not a settings file");
  }
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw std::runtime_error("cannot read " + path.string() + ": " + std::strerror(e));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

// The shapes handoff merges into; anything else is refused, so a file we do not understand is
// never rewritten.
void check_shape(const ordered_json& settings, const fs::path& path) {
  const std::string where = path.string() + ": ";
  if (!settings.is_object()) throw std::runtime_error(where + "expected a JSON object");
  if (settings.contains("hooks")) {
    const ordered_json& hooks = settings["hooks"];
    if (!hooks.is_object()) throw std::runtime_error(where + "\"hooks\" is not an object");
    for (const char* event : {"PostToolUse", "PostToolUseFailure", "PreToolUse"})
      if (hooks.contains(event) && !hooks[event].is_array())
        throw std::runtime_error(where + "\"hooks." + event + "\" is not an array");
  }
  if (settings.contains("permissions")) {
    const ordered_json& permissions = settings["permissions"];
    if (!permissions.is_object()) throw std::runtime_error(where + "\"permissions\" is not an object");
    if (permissions.contains("allow") && !permissions["allow"].is_array())
      throw std::runtime_error(where + "\"permissions.allow\" is not an array");
  }
}

// Replaces `path` with `text` atomically: a new file beside it (the old one's mode, else 0600),
// synced, renamed over it, the directory synced.
void write_settings(const fs::path& path, const std::string& text) {
  const fs::path dir = path.parent_path();
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw std::runtime_error("cannot create " + dir.string() + ": " + ec.message());
    ::chmod(dir.c_str(), 0700);
  }
  mode_t mode = 0600;
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) mode = st.st_mode & 0777;
  const fs::path temp = dir / (path.filename().string() + ".handoff-" + std::to_string(::getpid()) + ".tmp");
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error("cannot create " + temp.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  bool ok = true;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fchmod(fd, mode) == 0 && ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(ok ? errno : e));
  }
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

int run_setup(const setup_options& options) {
  fs::path path;
  if (!options.project.empty()) {
    path = fs::absolute(options.project) / ".claude" / "settings.json";
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') {
      report("setup", "HOME is not set; pass --project DIR for a project's settings");
      return exit_usage;
    }
    path = fs::path(home) / ".claude" / "settings.json";
  }
  try {
    const std::optional<std::string> before = read_settings(path);
    ordered_json settings = ordered_json::object();
    if (before && before->find_first_not_of(" \t\r\n") != std::string::npos) {
      settings = ordered_json::parse(*before, nullptr, false);
      if (settings.is_discarded())
        throw std::runtime_error(path.string() + " is not valid JSON; fix it first (nothing was changed)");
    }
    check_shape(settings, path);
    const fs::path store = options.artifact_dir.empty() ? rpc::default_artifact_dir() : fs::path(options.artifact_dir);
    if (store.empty()) {
      report("setup", "no artifact directory: HOME is unset; pass --artifact-dir");
      return exit_usage;
    }
    std::string artifact_dir = fs::absolute(store).lexically_normal().string();
    while (artifact_dir.size() > 1 && artifact_dir.back() == '/') artifact_dir.pop_back();
    ordered_json after;
    if (options.remove) {
      after = without_handoff(settings, artifact_dir);
    } else {
      const fs::path self = rpc::own_executable();
      claude_code_entries entries;
      append_shell_word(entries.command, self.empty() ? std::string("handoff") : self.string());
      entries.command += " hook claude-code";
      entries.artifact_dir = artifact_dir;
      entries.foreground_agents = options.foreground_agents;
      after = with_handoff(settings, entries);
    }
    const std::string text = after.dump(2) + "\n";
    if (after == settings && before) {
      std::printf("setup claude-code: %s already %s; nothing to change\n", path.c_str(),
                  options.remove ? "has no entry of handoff's" : "has handoff's entries");
      return exit_ok;
    }
    if (options.dry_run) {
      std::printf("setup claude-code: would write %s:\n%s", path.c_str(), text.c_str());
      return exit_ok;
    }
    if (options.remove && !before) {
      std::printf("setup claude-code: %s does not exist; nothing to remove\n", path.c_str());
      return exit_ok;
    }
    write_settings(path, text);
    std::printf("setup claude-code: %s %s\n", options.remove ? "removed handoff's entries from" : "wrote handoff's entries to",
                path.c_str());
    return exit_ok;
  } catch (const std::exception& e) {
    report("setup", e.what());
    return exit_failure;
  }
}

}  // namespace

command add_setup_command(CLI::App& app) {
  auto options = std::make_shared<setup_options>();
  CLI::App* setup = app.add_subcommand("setup", "Install handoff into a harness's settings (or take it out)");
  setup->require_subcommand(1);
  CLI::App* claude = setup->add_subcommand(
      "claude-code",
      "Claude Code: hooks that bound Agent results, and Read access to the artifact store (~/.claude/settings.json)");
  claude->add_option("--project", options->project, "Edit DIR/.claude/settings.json instead of the user's settings");
  claude->add_option("--artifact-dir", options->artifact_dir,
                     "The artifact store Read may read [handoffd's default, ~/.pi/agent/cache/openpi/subagent-results]");
  claude->add_flag("--remove", options->remove, "Take handoff's entries out again (and nothing else)");
  claude->add_flag("--dry-run", options->dry_run, "Print the settings file as it would be; change nothing");
  claude->add_flag("--foreground-agents", options->foreground_agents,
                   "Also run every Agent call in the foreground (a PreToolUse hook), where its answer is bounded");
  return command{setup, [options] { return run_setup(*options); }};
}

}  // namespace handoff::cli
