// `handoff setup gemini [--project DIR] [--dry-run] [--remove]`.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/harness/gemini/entry.hpp"
#include "cli/harness/gemini/settings.hpp"
#include "cli/harness/settings_file.hpp"
#include "engine/text/projection_notice.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::gemini {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct gemini_setup_options {
  std::string project;  // --project DIR: DIR/.gemini/settings.json instead of the user's
  bool remove = false;
  bool dry_run = false;
};

// The shapes handoff merges into; anything else is refused, so a file we do not understand is
// never rewritten.
void check_gemini_shape(const ordered_json& settings, const fs::path& path) {
  const std::string where = path.string() + ": ";
  if (!settings.contains("hooks")) return;
  const ordered_json& hooks = settings["hooks"];
  if (!hooks.is_object()) throw std::runtime_error(where + "\"hooks\" is not an object");
  for (const char* event : gemini_events)
    if (hooks.contains(event) && !hooks[event].is_array())
      throw std::runtime_error(where + "\"hooks." + event + "\" is not an array");
}

int run_gemini_setup(const gemini_setup_options& options) {
  fs::path path;
  if (!options.project.empty()) {
    path = fs::absolute(options.project) / ".gemini" / "settings.json";
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0')
      return setup_failed("gemini", "HOME is not set; pass --project DIR for a project's settings", exit_usage);
    path = fs::path(home) / ".gemini" / "settings.json";
  }
  try {
    edit_settings({"gemini", path, options.remove, options.dry_run},
                  [&](const ordered_json& s) { check_gemini_shape(s, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return without_gemini_hooks(std::move(settings));
                    const fs::path self = rpc::own_executable();
                    std::string command;
                    append_shell_word(command, self.empty() ? std::string("handoff") : self.string());
                    command += " hook gemini";
                    return with_gemini_hooks(std::move(settings), command);
                  });
    return exit_ok;
  } catch (const std::exception& e) {
    return setup_failed("gemini", e.what(), exit_failure);
  }
}

}  // namespace

run_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<gemini_setup_options>();
  app.add_option("--project", options->project, "Edit DIR/.gemini/settings.json instead of the user's settings");
  add_setup_flags(app, options->remove, options->dry_run);
  return [options] { return run_gemini_setup(*options); };
}

}  // namespace handoff::cli::gemini
