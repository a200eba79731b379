// `handoff progress --parent P --child C TEXT`
//
// subagent/progress: the child's recent activity, which `check` previews while it runs. It is
// a notification, so the daemon does not answer; the text's size is checked here against the
// daemon's limit (from initialize) so that an oversized one is not dropped in silence. Prints
// nothing on success.
#include "cli/progress_command.hpp"

#include <CLI/CLI.hpp>

#include <cstddef>

namespace handoff::cli {
namespace {

int run_progress(const daemon_options& daemon, const rpc::progress_params& params) {
  return with_client("progress", daemon, [&](client::connection& c, const rpc::initialize_result& server) {
    const auto max_bytes = server.limits.value("maxProgressBytes", rpc::wire_limits{}.max_progress_bytes);
    if (params.text.size() > max_bytes) {
      report("progress", "TEXT is " + std::to_string(params.text.size()) + " bytes; handoffd takes at most " +
                               std::to_string(max_bytes));
      return exit_usage;
    }
    c.progress(params);
    return exit_ok;
  });
}

}  // namespace

command add_progress_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto params = std::make_shared<rpc::progress_params>();
  CLI::App* sub = add_daemon_subcommand(app, "progress", "Report a running child's recent activity");
  sub->add_option("--parent", params->parent_id, "The parent agent's id")->required();
  sub->add_option("--child", params->child_id, "The child's id")->required();
  sub->add_option("text", params->text, "The activity text (what `check` shows while the child runs)")->required();
  return command{sub, [daemon, params] { return run_progress(*daemon, *params); }};
}

}  // namespace handoff::cli
