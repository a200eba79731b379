// `handoff`: the command line. main() only assembles the subcommands, parses, and runs the one
// chosen; each subcommand lives in its own file (project_command.cpp, ...).
#include <CLI/CLI.hpp>

#include <vector>

#include "cli/cancel_command.hpp"
#include "cli/check_command.hpp"
#include "cli/command.hpp"
#include "cli/complete_command.hpp"
#include "cli/daemon_command.hpp"
#include "cli/doctor_command.hpp"
#include "cli/gc_command.hpp"
#include "cli/harness/harness.hpp"
#include "cli/hook_command.hpp"
#include "cli/setup_command.hpp"
#include "cli/progress_command.hpp"
#include "cli/project_command.hpp"
#include "cli/read_command.hpp"
#include "cli/started_command.hpp"
#include "cli/status_command.hpp"
#include "cli/wait_command.hpp"
#include "cli/watch_command.hpp"

int main(int argc, char** argv) {
  using namespace handoff::cli;
  CLI::App app{"handoff: bounded, recoverable projections of long subagent results"};
  app.require_subcommand(1);
  const auto daemon = add_daemon_options(app);  // --socket, for the subcommands that talk to handoffd
  std::vector<command> commands = {
      add_project_command(app),
      add_status_command(app, daemon),
      add_started_command(app, daemon),
      add_progress_command(app, daemon),
      add_complete_command(app, daemon),
      add_wait_command(app, daemon),
      add_check_command(app, daemon),
      add_cancel_command(app, daemon),
      add_read_command(app, daemon),
      add_watch_command(app, daemon),
      add_gc_command(app, daemon),
      add_doctor_command(app, daemon),
      add_hook_command(app, daemon),
      add_setup_command(app),
  };
  for (command& server : add_server_commands(app, daemon)) commands.push_back(std::move(server));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and succeeds; any other parse error is a usage error.
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  }
  for (const command& c : commands) {
    if (c.app->parsed()) return c.run();
  }
  return exit_usage;  // unreachable: require_subcommand(1) made parse() fail first
}
