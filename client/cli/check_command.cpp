// `handoff check --parent P [--json] CHILD`
//
// subagent/check: one child's state (running, completed, delivered, cancelled), its status and
// size once completed, and a bounded preview (at most 2 KiB / 20 lines): the tail of its
// progress while it runs, the tail of its final text once completed. --json prints the result.
#include "cli/check_command.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace handoff::cli {
namespace {

struct check_options {
  rpc::check_params params;
  bool json = false;
};

std::string render(const std::string& parent_id, const rpc::check_result& r) {
  std::string out = "child " + r.child_id + " of parent " + parent_id;
  if (!r.title.empty()) out += " \"" + r.title + "\"";
  out += ": " + r.state;
  if (!r.status.empty()) out += ", status " + r.status;
  if (r.bytes && r.lines) out += ", " + std::to_string(*r.bytes) + " bytes, " + std::to_string(*r.lines) + " lines";
  out += "\n";
  if (!r.error.empty()) out += "error: " + r.error + "\n";
  if (!r.preview.empty()) {
    out += r.preview_truncated ? "--- preview (the last part) ---\n" : "--- preview ---\n";
    out += r.preview;
    if (r.preview.back() != '\n') out += '\n';
  }
  return out;
}

int run_check(const daemon_options& daemon, const check_options& options) {
  return with_client("check", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const rpc::check_result result = c.check(options.params);
    return print_result("check", options.json, result, [&] { return render(options.params.parent_id, result); });
  });
}

}  // namespace

command add_check_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<check_options>();
  CLI::App* sub = add_daemon_subcommand(app, "check", "Show a child's state and a short preview of its output");
  sub->add_option("--parent", options->params.parent_id, "The parent agent's id")->required();
  // The child is positional, as in `wait` and `cancel`: the parent's commands name the children
  // they ask about after the options.
  sub->add_option("child", options->params.child_id, "The child to show")->required();
  sub->add_flag("--json", options->json, "Print subagent/check's result as JSON");
  return command{sub, [daemon, options] { return run_check(*daemon, *options); }};
}

}  // namespace handoff::cli
