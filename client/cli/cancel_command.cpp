// `handoff cancel --parent P [--json] CHILD...`
//
// subagent/cancel: the parent no longer wants these children's results. Running children are
// marked cancelled (a later completion is dropped); completed, undelivered results are
// consumed. Ids the daemon does not know are reported, not an error. --json prints the result.
#include "cli/cancel_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>

namespace handoff::cli {
namespace {

struct cancel_options {
  rpc::cancel_params params;
  bool json = false;
};

std::string render(const rpc::cancel_params& p, const rpc::cancel_result& r) {
  std::string cancelled, unknown;
  for (const auto& id : p.child_ids) {
    const bool known = std::find(r.cancelled.begin(), r.cancelled.end(), id) != r.cancelled.end();
    std::string& list = known ? cancelled : unknown;
    list += (list.empty() ? "" : " ") + id;
  }
  std::string out = "cancelled: " + (cancelled.empty() ? std::string("none") : cancelled) + "\n";
  if (!unknown.empty()) out += "not known to handoffd: " + unknown + "\n";
  out += std::to_string(r.consumed) + (r.consumed == 1 ? " completed result" : " completed results") +
         " consumed\n";
  return out;
}

int run_cancel(const daemon_options& daemon, const cancel_options& options) {
  return with_client("cancel", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const rpc::cancel_result result = c.cancel(options.params);
    return print_result("cancel", options.json, result, [&] { return render(options.params, result); });
  });
}

}  // namespace

command add_cancel_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<cancel_options>();
  CLI::App* sub = add_daemon_subcommand(app, "cancel", "Drop interest in children; their results are consumed");
  sub->add_option("--parent", options->params.parent_id, "The parent agent's id")->required();
  sub->add_option("children", options->params.child_ids, "The children to cancel (1 to 64 ids)")
      ->required()
      ->expected(1, 64);
  sub->add_flag("--json", options->json, "Print subagent/cancel's result as JSON");
  return command{sub, [daemon, options] { return run_cancel(*daemon, *options); }};
}

}  // namespace handoff::cli
