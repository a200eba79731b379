// `handoff setup claude-code [--project DIR] [--artifact-dir DIR] [--dry-run] [--remove]`.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/harness/claude_code/entry.hpp"
#include "cli/harness/claude_code/settings.hpp"
#include "cli/harness/settings_file.hpp"
#include "cli/harness/store_dirs.hpp"
#include "engine/text/projection_notice.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::claude_code {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct claude_code_options {
  std::string project;       // --project DIR: DIR/.claude/settings.json instead of the user's
  std::string artifact_dir;  // --artifact-dir: the store to allow Read in [handoffd's default]
  bool remove = false;
  bool dry_run = false;
};

// The shapes handoff merges into; anything else is refused, so a file we do not understand is
// never rewritten.
void check_claude_code_shape(const ordered_json& settings, const fs::path& path) {
  const std::string where = path.string() + ": ";
  if (settings.contains("hooks")) {
    const ordered_json& hooks = settings["hooks"];
    if (!hooks.is_object()) throw std::runtime_error(where + "\"hooks\" is not an object");
    for (const char* event : handoff_events)
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

int run_claude_code_setup(const claude_code_options& options) {
  fs::path path;
  if (!options.project.empty()) {
    path = fs::absolute(options.project) / ".claude" / "settings.json";
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0')
      return setup_failed("claude-code", "HOME is not set; pass --project DIR for a project's settings", exit_usage);
    path = fs::path(home) / ".claude" / "settings.json";
  }
  const std::optional<store_dirs> stores = stores_to_allow(options.artifact_dir);
  if (!stores) return setup_failed("claude-code", "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  try {
    edit_settings({"claude-code", path, options.remove, options.dry_run},
                  [&](const ordered_json& s) { check_claude_code_shape(s, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return without_handoff(std::move(settings), stores->own);
                    const fs::path self = rpc::own_executable();
                    claude_code_entries entries;
                    append_shell_word(entries.command, self.empty() ? std::string("handoff") : self.string());
                    entries.command += " hook claude-code";
                    entries.artifact_dirs = stores->allow;
                    entries.own_artifact_dirs = stores->own;
                    return with_handoff(std::move(settings), entries);
                  });
    return exit_ok;
  } catch (const std::exception& e) {
    return setup_failed("claude-code", e.what(), exit_failure);
  }
}

}  // namespace

run_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<claude_code_options>();
  app.add_option("--project", options->project, "Edit DIR/.claude/settings.json instead of the user's settings");
  app.add_option("--artifact-dir", options->artifact_dir,
                 "The artifact store Read may read [handoffd's default, ${XDG_CACHE_HOME:-~/.cache}/handoff/results, "
                 "and its former default while that exists]");
  add_setup_flags(app, options->remove, options->dry_run);
  return [options] { return run_claude_code_setup(*options); };
}

}  // namespace handoff::cli::claude_code
