// `handoff setup copilot [--artifact-dir DIR] [--dry-run] [--remove]`.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/harness/copilot/entry.hpp"
#include "cli/harness/copilot/settings.hpp"
#include "cli/harness/hook_groups.hpp"
#include "cli/harness/settings_file.hpp"
#include "cli/harness/store_dirs.hpp"
#include "engine/text/shell_word.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::copilot {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct copilot_setup_options : setup_flags {
  std::string artifact_dir;  // --artifact-dir: the store Copilot's view may read [handoffd's default]
};

// ${COPILOT_HOME:-$HOME/.copilot}/settings.json; empty when neither is set.
fs::path copilot_settings_path() {
  if (const char* home = std::getenv("COPILOT_HOME"); home != nullptr && *home != '\0')
    return fs::absolute(home) / "settings.json";
  return project_or_home({}, fs::path(".copilot") / "settings.json");
}

int run_copilot_setup(const copilot_setup_options& options, setup_report& report) {
  const fs::path path = copilot_settings_path();
  if (path.empty()) return report.failed("copilot", "neither COPILOT_HOME nor HOME is set", exit_usage);
  const std::optional<store_dirs> stores = stores_to_allow(options.artifact_dir);
  if (!stores) return report.failed("copilot", "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  // The shapes handoff merges into ("hooks" an object, each of its events a list); anything else
  // is refused, so a file we do not understand is never rewritten.
  return run_setup("copilot", report, [&] {
    edit_settings({"copilot", path, options.remove, options.mode, &report},
                  [&](const ordered_json& s) { check_hooks_shape(s, copilot_events, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return without_copilot_hooks(std::move(settings));
                    const fs::path self = rpc::own_executable();
                    std::string command;
                    append_shell_word(command, self.empty() ? std::string("handoff") : self.string());
                    command += " hook copilot";
                    return with_copilot_hooks(std::move(settings), command, stores->allow);
                  });
  });
}

}  // namespace

setup_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<copilot_setup_options>();
  app.add_option("--artifact-dir", options->artifact_dir,
                 "The artifact store Copilot's view may read without asking [handoffd's default, and its former default "
                 "while that exists]");
  return setup_runner(app, options, run_copilot_setup);
}

}  // namespace handoff::cli::copilot
