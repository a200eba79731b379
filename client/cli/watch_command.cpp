// `handoff watch --parent P [--tokens N --context-window N | --no-usage] [--once] [--json]`
//
// Acts as parent P's endpoint, the way a harness's extension would: registers (initialize with
// parentId), reports the parent idle, then answers each context/usage from the flags and prints
// each auto-delivered batch exactly as the parent model would read it, after a header line that
// separates batches. A batch is acknowledged only once it has been written and flushed: one
// that could not be printed is refused, stays queued for the next endpoint, and watch exits 1.
// --once exits after the first delivery; otherwise watch runs until interrupted or the daemon
// goes away (exit 1).
//
// Usage: --tokens N --context-window N as Pi reports it; --context-window alone means tokens
// unknown (as right after a compaction); --no-usage, the default, answers null. Either unknown
// form makes the daemon use its static caps.
//
// --json prints each delivery as one line of JSON: parent/deliver's params (parentId,
// deliveryId, sections, text, deferred, budget).
#include "cli/watch_command.hpp"

#include <CLI/CLI.hpp>

#include <stdexcept>
#include <string>

#include "handoff/parent_endpoint.hpp"

namespace handoff::cli {
namespace {

struct watch_options {
  std::string parent_id;
  usage_flags usage;
  bool no_usage = false;
  bool once = false;
  bool json = false;
};

std::string header(const rpc::deliver_params& d) {
  const std::size_t n = d.batch.sections.size();
  return "=== handoff delivery " + d.delivery_id + " for parent " + d.parent_id + ": " + std::to_string(n) +
         (n == 1 ? " result" : " results") + ", " + std::to_string(d.batch.deferred) + " deferred, " +
         d.batch.budget.mode + " budget ===\n";
}

std::string render(const rpc::deliver_params& d, bool json) {
  if (json) return rpc::encode(d).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::string out = header(d) + d.batch.text;
  if (out.back() != '\n') out += '\n';  // the next header starts a line of its own
  return out;
}

int run_watch(const daemon_options& daemon, const watch_options& options) {
  const std::optional<rpc::usage_dto> usage = usage_from(options.usage);
  return with_connection("watch", daemon, [&](client::connection& c) {
    bool output_broken = false;
    client::parent_callbacks callbacks;
    callbacks.usage = [usage] { return usage; };
    callbacks.deliver = [&](const rpc::deliver_params& d) {
      // Thrown, not returned: the library then answers with an error and the batch stays queued.
      if (!print("watch", render(d, options.json))) {
        output_broken = true;
        throw std::runtime_error("the batch could not be written; it stays queued");
      }
    };
    client::parent_endpoint parent(c, options.parent_id, callbacks, "handoff-cli watch");
    parent.report_idle();
    report("watch", "endpoint of parent " + options.parent_id + " at " + c.socket_path().string() +
                          "; waiting for deliveries");
    while (!(options.once && parent.deliveries_acknowledged() > 0)) {
      c.serve_one(std::nullopt);
      if (output_broken) return exit_failure;  // nothing more can be shown; the daemon keeps it
    }
    return exit_ok;
  });
}

}  // namespace

command add_watch_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<watch_options>();
  CLI::App* sub = add_daemon_subcommand(
      app, "watch", "Be a parent's endpoint: print and acknowledge each auto-delivered batch");
  sub->add_option("--parent", options->parent_id, "The parent agent's id")->required();
  CLI::Option* window = add_usage_flags(*sub, options->usage);
  sub->add_flag("--no-usage", options->no_usage, "Answer context/usage with null: usage unknown (the default)")
      ->excludes(window);
  sub->add_flag("--once", options->once, "Exit after the first delivery has been printed and acknowledged");
  sub->add_flag("--json", options->json, "Print each delivery as one line of JSON (parent/deliver's params)");
  return command{sub, [daemon, options] { return run_watch(*daemon, *options); }};
}

}  // namespace handoff::cli
