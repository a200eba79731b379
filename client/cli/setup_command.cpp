#include "cli/setup_command.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cli/claude_code_settings.hpp"
#include "cli/daemon_command.hpp"
#include "cli/pi_settings.hpp"
#include "cli/settings_file.hpp"
#include "engine/text/projection_notice.hpp"
#include "protocol/default_paths.hpp"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

struct setup_options {
  std::string project;       // --project DIR: DIR/.claude/settings.json (DIR/.pi/settings.json) instead of the user's
  std::string artifact_dir;  // claude-code --artifact-dir: the store to allow Read in [handoffd's default]
  std::string package;       // pi --package DIR: the @handoff/pi package to register
  bool remove = false;
  bool dry_run = false;
};

int failed(std::string_view target, std::string_view why, int status = exit_failure) {
  report("setup " + std::string(target), why);
  return status;
}

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

int run_claude_code(const setup_options& options) {
  fs::path path;
  if (!options.project.empty()) {
    path = fs::absolute(options.project) / ".claude" / "settings.json";
  } else {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0')
      return failed("claude-code", "HOME is not set; pass --project DIR for a project's settings", exit_usage);
    path = fs::path(home) / ".claude" / "settings.json";
  }
  const fs::path store = options.artifact_dir.empty() ? rpc::default_artifact_dir() : fs::path(options.artifact_dir);
  if (store.empty()) return failed("claude-code", "no artifact directory: HOME is unset; pass --artifact-dir", exit_usage);
  std::string artifact_dir = fs::absolute(store).lexically_normal().string();
  while (artifact_dir.size() > 1 && artifact_dir.back() == '/') artifact_dir.pop_back();
  try {
    edit_settings({"claude-code", path, options.remove, options.dry_run},
                  [&](const ordered_json& s) { check_claude_code_shape(s, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return without_handoff(std::move(settings), artifact_dir);
                    const fs::path self = rpc::own_executable();
                    claude_code_entries entries;
                    append_shell_word(entries.command, self.empty() ? std::string("handoff") : self.string());
                    entries.command += " hook claude-code";
                    entries.artifact_dir = artifact_dir;
                    return with_handoff(std::move(settings), entries);
                  });
    return exit_ok;
  } catch (const std::exception& e) {
    return failed("claude-code", e.what());
  }
}

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

int run_pi(const setup_options& options) {
  fs::path base;
  if (!options.project.empty()) {
    base = fs::absolute(options.project) / ".pi";
  } else if (const char* agent = std::getenv("PI_CODING_AGENT_DIR"); agent != nullptr && *agent != '\0') {
    base = fs::absolute(agent);
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    base = fs::path(home) / ".pi" / "agent";
  } else {
    return failed("pi", "neither PI_CODING_AGENT_DIR nor HOME is set; pass --project DIR", exit_usage);
  }
  base = base.lexically_normal();
  const fs::path path = base / "settings.json";
  fs::path package;
  if (!options.remove) {
    package = options.package.empty() ? default_pi_package() : fs::weakly_canonical(fs::absolute(options.package));
    if (package.empty())
      return failed("pi", "no built @handoff/pi package beside this handoff; pass --package DIR", exit_usage);
    if (!is_handoff_package(package))
      return failed("pi", package.string() + " is not the @handoff/pi package (no package.json named so)", exit_usage);
    if (!fs::is_regular_file(package / "dist" / "src" / "extension.js"))
      return failed("pi", package.string() + " is not built (no dist/src/extension.js): npm ci && npm run build there",
                    exit_usage);
  }
  try {
    bool bridge = false;
    edit_settings({"pi", path, options.remove, options.dry_run},
                  [&](const ordered_json& s) { check_pi_shape(s, path); },
                  [&](ordered_json settings) {
                    if (options.remove) return pi_without_handoff(std::move(settings), base, is_handoff_package);
                    bridge = has_pi_subagents(settings);
                    return pi_with_handoff(std::move(settings), {base, package, bridge}, is_handoff_package);
                  });
    if (!options.remove)
      std::printf(bridge ? "setup pi: pi-subagents is installed: its results are bounded by %s\n"
                         : "setup pi: pi-subagents is not among Pi's packages: no bridge (%s; run this again after "
                           "installing it)\n",
                  bridge_path(package).c_str());
    return exit_ok;
  } catch (const std::exception& e) {
    return failed("pi", e.what());
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
  CLI::App* pi = setup->add_subcommand(
      "pi", "Pi: the @handoff/pi package in Pi's packages, and the pi-subagents bridge when pi-subagents is installed "
            "(${PI_CODING_AGENT_DIR:-~/.pi/agent}/settings.json)");
  pi->add_option("--project", options->project, "Edit DIR/.pi/settings.json instead of the user's settings");
  pi->add_option("--package", options->package,
                 "The built @handoff/pi package [PREFIX/share/handoff/pi beside this handoff, else the checkout's client/pi]");
  for (CLI::App* target : {claude, pi}) {
    target->add_flag("--remove", options->remove, "Take handoff's entries out again (and nothing else)");
    target->add_flag("--dry-run", options->dry_run, "Print the settings file as it would be; change nothing");
  }
  return command{setup, [options, claude] { return claude->parsed() ? run_claude_code(*options) : run_pi(*options); }};
}

}  // namespace handoff::cli
