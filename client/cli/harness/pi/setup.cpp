// `handoff setup pi [--project DIR] [--package DIR] [--dry-run] [--remove]`.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli/harness/pi/entry.hpp"
#include "cli/harness/pi/settings.hpp"
#include "cli/harness/settings_file.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli::pi {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct pi_options : setup_flags {
  std::string project;  // --project DIR: DIR/.pi/settings.json instead of the user's
  std::string package;  // --package DIR: the @handoff/pi package to register
};

// A directory holding the @handoff/pi package (its package.json names it).
bool is_handoff_package(const fs::path& dir) {
  std::ifstream in(dir / "package.json");
  if (!in) return false;
  const ordered_json manifest = ordered_json::parse(in, nullptr, false);
  return manifest.is_object() && manifest.value("name", "") == "@handoff/pi";
}

// The package beside this handoff: PREFIX/share/handoff/pi for PREFIX/bin/handoff (an
// install), else client/pi of the build tree this handoff was built in. Built: its extension's
// JavaScript is there.
fs::path default_pi_package() {
  const fs::path self = rpc::own_executable();
  if (self.empty()) return {};
  const fs::path bin = self.parent_path();
  for (const fs::path& candidate : {bin / ".." / "share" / "handoff" / "pi", bin / ".." / ".." / "client" / "pi"}) {
    const fs::path dir = fs::weakly_canonical(candidate);
    if (is_handoff_package(dir)) return dir;
  }
  return {};
}

int run_pi_setup(const pi_options& options, setup_report& report) {
  fs::path base;
  if (!options.project.empty()) {
    base = fs::absolute(options.project) / ".pi";
  } else if (const char* agent = std::getenv("PI_CODING_AGENT_DIR"); agent != nullptr && *agent != '\0') {
    base = fs::absolute(agent);
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = fs::path(home) / ".pi" / "agent";
  } else {
    return report.failed("pi", "neither PI_CODING_AGENT_DIR nor HOME is set; pass --project DIR", exit_usage);
  }
  base = base.lexically_normal();
  const fs::path path = base / "settings.json";
  fs::path package;
  if (!options.remove) {
    package = options.package.empty() ? default_pi_package() : fs::weakly_canonical(fs::absolute(options.package));
    if (package.empty())
      return report.failed("pi", "no built @handoff/pi package beside this handoff; pass --package DIR", exit_usage);
    if (!is_handoff_package(package))
      return report.failed("pi", package.string() + " is not the @handoff/pi package (no package.json named so)",
                           exit_usage);
    if (!fs::is_regular_file(package / "dist" / "src" / "extension.js"))
      return report.failed("pi", package.string() + " is not built (no dist/src/extension.js): npm ci && npm run build there",
                           exit_usage);
  }
  return run_setup("pi", report, [&] {
    bool bridge = false;
    edit_settings({"pi", path, options.remove, options.mode, &report},
                  [&](const ordered_json& s) { check_pi_shape(s, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return pi_without_handoff(std::move(settings), base, is_handoff_package);
                    bridge = has_pi_subagents(settings);
                    return pi_with_handoff(std::move(settings), {base, package, bridge}, is_handoff_package);
                  });
    if (!options.remove && options.mode != setup_mode::check)
      std::printf(bridge ? "setup pi: pi-subagents is installed: its results are bounded by %s\n"
                         : "setup pi: pi-subagents is not among Pi's packages: no bridge (%s; run this again after "
                           "installing it)\n",
                  bridge_path(package).c_str());
  });
}

}  // namespace

setup_fn add_setup(CLI::App& app) {
  auto options = std::make_shared<pi_options>();
  app.add_option("--project", options->project, "Edit DIR/.pi/settings.json instead of the user's settings");
  app.add_option("--package", options->package,
                 "The built @handoff/pi package [PREFIX/share/handoff/pi beside this handoff, else the checkout's client/pi]");
  return setup_runner(app, options, run_pi_setup);
}

}  // namespace handoff::cli::pi
