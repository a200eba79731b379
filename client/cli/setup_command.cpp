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
#include "engine/atomic_file.hpp"
#include "engine/posix_io.hpp"
#include "engine/projection_notice.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

constexpr std::size_t max_settings_bytes = 16 << 20;  // a settings file larger than this is refused

struct setup_options {
  std::string project;       // --project DIR: DIR/.claude/settings.json instead of the user's
  std::string artifact_dir;  // --artifact-dir: the store to allow Read in [handoffd's default]
  bool remove = false;
  bool dry_run = false;
  bool foreground_agents = false;
};

// The file's text, or nullopt when it does not exist. Throws (fs_error, std::runtime_error) on
// anything else: a symlink, not a regular file, over 16 MiB, unreadable.
std::optional<std::string> read_settings(const fs::path& path) {
  const unique_fd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd) {
    if (errno == ENOENT) return std::nullopt;
    if (errno == ELOOP) throw std::runtime_error(path.string() + " is a symlink; handoff edits only a regular file");
    throw fs_error(errno, "opening " + path.string());
  }
  struct stat st{};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) throw std::runtime_error(path.string() + " is not a regular file");
  return read_all(fd.get(), max_settings_bytes, "reading " + path.string());
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

// Replaces `path` with `text` atomically (write_file_atomically: a temp file beside it, synced,
// renamed over it, the directory synced), then gives it back the old file's mode (else 0600).
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
  const unique_fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_fd) throw fs_error(errno, "opening " + dir.string());
  const std::string name = path.filename().string();
  write_file_atomically(dir_fd.get(), name, text, publish_mode::replace, path.string());
  if (mode != 0600 && ::fchmodat(dir_fd.get(), name.c_str(), mode, 0) != 0) throw fs_error(errno, "restoring the mode of " + path.string());
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
