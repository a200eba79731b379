// `handoff gc [--dry-run] [--json]`
//
// Asks handoffd to collect its artifact store now, as it does every --gc-interval-s: stale temp
// files, then artifacts older than --gc-max-age-days, then the oldest until the store fits
// --gc-max-bytes; never an artifact an undelivered result or a recent delivery points to.
// --dry-run lists what would go and removes nothing. --json prints daemon/gc's result as sent.
// Exit status 1 when a removal failed (the reasons are printed).
#include "cli/gc_command.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "cli/byte_size.hpp"
#include "protocol/methods.hpp"

namespace handoff::cli {
namespace {

struct gc_options {
  bool dry_run = false;
  bool json = false;
};

std::uint64_t number(const nlohmann::json& j, const char* key) { return j.value(key, std::uint64_t{0}); }

std::string plural(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string render(const nlohmann::json& r) {
  const bool dry_run = r.value("dryRun", false);
  const nlohmann::json& removed = r.at("removed");
  std::string out = std::string(dry_run ? "would remove " : "removed ") +
                    plural(removed.size(), "file", "files") + " (" + format_byte_size(number(r, "removedBytes")) +
                    ")" + (removed.empty() ? "\n" : ":\n");
  for (const nlohmann::json& e : removed) {
    // Artifacts by hash; temp files (a crashed save) by name.
    const std::string what = e.at("sha256").is_string() ? e.at("sha256").get<std::string>() : e.value("name", "?");
    out += "  " + e.value("reason", std::string("?")) + "\t" + what + "\t" + format_byte_size(number(e, "bytes")) + "\n";
  }
  out += "kept " + plural(number(r, "keptFiles"), "artifact", "artifacts") + " (" +
         format_byte_size(number(r, "keptBytes")) + "), of which " + std::to_string(number(r, "protectedFiles")) +
         " in use by undelivered results or recent deliveries\n";
  if (r.value("overQuota", false))
    out += "the store is still over its " + format_byte_size(number(r.at("limits"), "maxBytes")) +
           " quota: everything left is in use\n";
  if (const auto skipped = number(r, "skipped"); skipped != 0)
    out += plural(skipped, "file was", "files were") + " kept after all: changed or put back in use meanwhile\n";
  return out;
}

int run_gc(const daemon_options& daemon, const gc_options& options) {
  return with_client("gc", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const nlohmann::json result = c.call(rpc::methods::daemon_gc.name, rpc::encode(rpc::gc_params{options.dry_run}));
    if (!(options.json ? print_json("gc", result) : print("gc", render(result)))) return exit_failure;
    const nlohmann::json& problems = result.at("problems");
    for (const nlohmann::json& p : problems) report("gc", p.get<std::string>());
    return problems.empty() ? exit_ok : exit_failure;
  });
}

}  // namespace

command add_gc_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<gc_options>();
  CLI::App* sub = add_daemon_subcommand(app, "gc", "Collect the artifact store now (old, over-quota, unused)");
  sub->add_flag("--dry-run", options->dry_run, "List what would be removed; remove nothing");
  sub->add_flag("--json", options->json, "Print daemon/gc's result as JSON");
  return command{sub, [daemon, options] { return run_gc(*daemon, *options); }};
}

}  // namespace handoff::cli
