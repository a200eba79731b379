// `handoff started --parent P --child C [--title T] [--json]`
//
// subagent/started: the child is running, so `wait` and `check` know it before it completes.
// Prints the child's state ("running", or the state it already had); --json prints the result.
#include "cli/started_command.hpp"

#include <CLI/CLI.hpp>

namespace handoff::cli {
namespace {

struct started_options {
  rpc::started_params params;
  bool json = false;
};

int run_started(const daemon_options& daemon, const started_options& options) {
  return with_client("started", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const rpc::started_result result = c.started(options.params);
    return print_result("started", options.json, result, [&] {
      return "child " + options.params.child_id + " of parent " + options.params.parent_id + ": " + result.state + "\n";
    });
  });
}

}  // namespace

command add_started_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<started_options>();
  CLI::App* sub = add_daemon_subcommand(app, "started", "Report that a child (subagent) is running");
  sub->add_option("--parent", options->params.parent_id, "The parent agent's id")->required();
  sub->add_option("--child", options->params.child_id, "The child's id, unique under its parent")->required();
  sub->add_option("--title", options->params.title, "A short title shown with its result");
  sub->add_flag("--json", options->json, "Print subagent/started's result as JSON");
  return command{sub, [daemon, options] { return run_started(*daemon, *options); }};
}

}  // namespace handoff::cli
