// `handoff setup gemini [--project DIR] [--dry-run] [--remove]`.
#include <filesystem>
#include <memory>
#include <string>

#include "cli/harness/gemini/entry.hpp"
#include "cli/harness/gemini/settings.hpp"
#include "cli/harness/hook_groups.hpp"
#include "cli/harness/settings_file.hpp"
#include "engine/text/shell_word.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::gemini {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct gemini_setup_options : setup_flags {
  std::string project;  // --project DIR: DIR/.gemini/settings.json instead of the user's
};

int run_gemini_setup(const gemini_setup_options& options, setup_report& report) {
  const fs::path path = project_or_home(options.project, fs::path(".gemini") / "settings.json");
  if (path.empty())
    return report.failed("gemini", "HOME is not set; pass --project DIR for a project's settings", exit_usage);
  return run_setup("gemini", report, [&] {
    edit_settings({"gemini", path, options.remove, options.mode, &report},
                  [&](const ordered_json& s) { check_hooks_shape(s, gemini_events, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return without_gemini_hooks(std::move(settings));
                    const fs::path self = rpc::own_executable();
                    std::string command;
                    append_shell_word(command, self.empty() ? std::string("handoff") : self.string());
                    command += " hook gemini";
                    return with_gemini_hooks(std::move(settings), command);
                  });
  });
}

}  // namespace

setup_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<gemini_setup_options>();
  app.add_option("--project", options->project, "Edit DIR/.gemini/settings.json instead of the user's settings");
  return setup_runner(app, options, run_gemini_setup);
}

}  // namespace handoff::cli::gemini
