// `handoff setup claude-code [--project DIR] [--artifact-dir DIR] [--dry-run] [--remove]`.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/harness/claude_code/entry.hpp"
#include "cli/harness/claude_code/settings.hpp"
#include "cli/harness/hook_groups.hpp"
#include "cli/harness/settings_file.hpp"
#include "cli/harness/store_dirs.hpp"
#include "engine/text/shell_word.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::claude_code {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct claude_code_options : setup_flags {
  std::string project;       // --project DIR: DIR/.claude/settings.json instead of the user's
  std::string artifact_dir;  // --artifact-dir: the store to allow Read in [handoffd's default]
};

// The shapes handoff merges into; anything else is refused, so a file we do not understand is
// never rewritten.
void check_claude_code_shape(const ordered_json& settings, const fs::path& path) {
  check_hooks_shape(settings, handoff_events, path);
  const std::string where = path.string() + ": ";
  if (settings.contains("permissions")) {
    const ordered_json& permissions = settings["permissions"];
    if (!permissions.is_object()) throw std::runtime_error(where + "\"permissions\" is not an object");
    if (permissions.contains("allow") && !permissions["allow"].is_array())
      throw std::runtime_error(where + "\"permissions.allow\" is not an array");
  }
}

int run_claude_code_setup(const claude_code_options& options, setup_report& report) {
  const fs::path path = project_or_home(options.project, fs::path(".claude") / "settings.json");
  if (path.empty())
    return report.failed("claude-code", "HOME is not set; pass --project DIR for a project's settings", exit_usage);
  const std::optional<store_dirs> stores = stores_to_allow(options.artifact_dir);
  if (!stores) return report.failed("claude-code", "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  return run_setup("claude-code", report, [&] {
    edit_settings({"claude-code", path, options.remove, options.mode, &report},
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
  });
}

}  // namespace

setup_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<claude_code_options>();
  app.add_option("--project", options->project, "Edit DIR/.claude/settings.json instead of the user's settings");
  app.add_option("--artifact-dir", options->artifact_dir,
                 "The artifact store Read may read [handoffd's default, ${XDG_CACHE_HOME:-~/.cache}/handoff/results, "
                 "and its former default while that exists]");
  return setup_runner(app, options, run_claude_code_setup);
}

}  // namespace handoff::cli::claude_code
