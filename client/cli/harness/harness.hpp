// The harnesses handoff serves, in one table (harnesses()): for each, its name (as in `handoff
// setup NAME` and `handoff hook NAME`), how its settings are set up, and its hook, if it has
// one. Each harness's glue lives in its own folder beside this file (claude_code/, cline/, codex/,
// copilot/, gemini/, opencode/, pi/), a library and a namespace of its own over the hook core (core/);
// adding a harness is a folder, one entry in harnesses() (table.cpp) and its tests
// (docs/design.md, "To add a harness").
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/daemon_command.hpp"
#include "cli/harness/setup_report.hpp"

namespace handoff::cli {

// What runs a subcommand once parsing chose it: an exit status.
using run_fn = std::function<int()>;
// What runs `handoff setup NAME` once its options are parsed: an exit status; what it found or
// why it failed also go to `report`.
using setup_fn = std::function<int(setup_report& report)>;

struct harness {
  std::string_view name;        // "claude-code": the subcommand of `handoff setup` and `handoff hook`
  std::string_view program;     // "claude": the harness's command, which `handoff doctor` looks for on the PATH
  std::string_view setup_help;  // one line for `handoff setup --help`
  // Registers `handoff setup NAME`'s options on `app` (--remove, --dry-run and --check included);
  // returns what runs it.
  setup_fn (*add_setup)(CLI::App& app);
  // `handoff hook NAME`: its help line and its registration, or null when the harness has no
  // hook.
  std::string_view hook_help;
  run_fn (*add_hook)(CLI::App& app, std::shared_ptr<const daemon_options> daemon);
  // A server the harness starts (Codex: `handoff mcp`, an MCP server): registers its own
  // top-level subcommand on `app` and returns it; null when the harness has none.
  command (*add_server)(CLI::App& app, std::shared_ptr<const daemon_options> daemon) = nullptr;
};

// Every harness, in the order `--help` lists them.
const std::vector<harness>& harnesses();

// Every harness's server subcommand (`handoff mcp`), for main().
std::vector<command> add_server_commands(CLI::App& app, const std::shared_ptr<const daemon_options>& daemon);

// What every `handoff setup NAME` shares (setup_steps.cpp).
//
// --remove, --dry-run and --check, which every setup takes: each harness's options derive from
// this. --check excludes the other two: it says whether `handoff setup NAME` would change anything.
struct setup_flags {
  bool remove = false;                  // take handoff's entries out again (and nothing else)
  setup_mode mode = setup_mode::write;  // --dry-run: print; --check: check
};
void add_setup_flags(CLI::App& app, setup_flags& flags);

// A harness's add_setup, once its own options are on `app`: adds the flags to `options` and
// returns what calls `run` with them.
template <class Options>
setup_fn setup_runner(CLI::App& app, std::shared_ptr<Options> options, int (*run)(const Options&, setup_report&)) {
  add_setup_flags(app, *options);
  return [options, run](setup_report& report) { return run(*options, report); };
}

// Runs a setup's edits: exit_ok (a check: exit_setup_needed when a file would change), or what
// they throw (a std::exception) reported as report.failed(name, what, exit_failure).
int run_setup(std::string_view name, setup_report& report, const std::function<void()>& edits);

// DIR/`under` for --project DIR (made absolute), else $HOME/`under`; empty when HOME is unset or
// empty.
std::filesystem::path project_or_home(const std::string& project, const std::filesystem::path& under);

}  // namespace handoff::cli
