// `handoff setup copilot [--artifact-dir DIR] [--dry-run] [--remove]`.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/harness/copilot/entry.hpp"
#include "cli/harness/copilot/settings.hpp"
#include "cli/harness/settings_file.hpp"
#include "cli/harness/store_dirs.hpp"
#include "engine/text/projection_notice.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::copilot {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct copilot_setup_options {
  std::string artifact_dir;  // --artifact-dir: the store Copilot's view may read [handoffd's default]
  bool remove = false;
  bool dry_run = false;
};

// The shapes handoff merges into; anything else is refused, so a file we do not understand is
// never rewritten.
void check_copilot_shape(const ordered_json& settings, const fs::path& path) {
  const std::string where = path.string() + ": ";
  if (!settings.contains("hooks")) return;
  const ordered_json& hooks = settings["hooks"];
  if (!hooks.is_object()) throw std::runtime_error(where + "\"hooks\" is not an object");
  for (const char* event : copilot_events)
    if (hooks.contains(event) && !hooks[event].is_array())
      throw std::runtime_error(where + "\"hooks." + event + "\" is not an array");
}

// ${COPILOT_HOME:-$HOME/.copilot}/settings.json; empty when neither is set.
fs::path copilot_settings_path() {
  if (const char* home = std::getenv("COPILOT_HOME"); home != nullptr && *home != '\0')
    return fs::absolute(home) / "settings.json";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return fs::path(home) / ".copilot" / "settings.json";
  return {};
}

int run_copilot_setup(const copilot_setup_options& options) {
  const fs::path path = copilot_settings_path();
  if (path.empty()) return setup_failed("copilot", "neither COPILOT_HOME nor HOME is set", exit_usage);
  const std::optional<store_dirs> stores = stores_to_allow(options.artifact_dir);
  if (!stores) return setup_failed("copilot", "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  try {
    edit_settings({"copilot", path, options.remove, options.dry_run},
                  [&](const ordered_json& s) { check_copilot_shape(s, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return without_copilot_hooks(std::move(settings));
                    const fs::path self = rpc::own_executable();
                    std::string command;
                    append_shell_word(command, self.empty() ? std::string("handoff") : self.string());
                    command += " hook copilot";
                    return with_copilot_hooks(std::move(settings), command, stores->allow);
                  });
    return exit_ok;
  } catch (const std::exception& e) {
    return setup_failed("copilot", e.what(), exit_failure);
  }
}

}  // namespace

run_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<copilot_setup_options>();
  app.add_option("--artifact-dir", options->artifact_dir,
                 "The artifact store Copilot's view may read without asking [handoffd's default, and its former default "
                 "while that exists]");
  add_setup_flags(app, options->remove, options->dry_run);
  return [options] { return run_copilot_setup(*options); };
}

}  // namespace handoff::cli::copilot
