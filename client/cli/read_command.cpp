// `handoff read [--offset N] [--limit N] [--json] SHA256`
//
// artifact/read: lines of an artifact, the saved full text of a cut result, addressed by its
// SHA-256 (the footer of a cut result names it and gives the exact offset/limit of the omitted
// middle). Lines are numbered as Pi's `read` tool numbers them: split("\n"), 1-based. A page
// stops at 2000 lines or 50 KiB, as Pi's does.
//
// Prints the lines' text exactly (joined with "\n", no newline added); when lines remain, says
// on stderr where to continue. --json prints the result (path, text, firstLine, lastLine,
// totalLines, cut, nextOffset).
#include "cli/read_command.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace handoff::cli {
namespace {

struct read_options {
  rpc::artifact_read_params params;
  bool json = false;
};

// The daemon checks this too; checking it here makes a typo a usage error (exit 2).
const CLI::Validator sha256_hex(
    [](const std::string& s) -> std::string {
      const bool ok = s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
                        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                      });
      return ok ? std::string() : "expected 64 lowercase hex digits (an artifact's SHA-256)";
    },
    "SHA256");

int run_read(const daemon_options& daemon, const read_options& options) {
  return with_client("read", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const rpc::artifact_read_result result = c.read_artifact(options.params);
    if (options.json) return print_json("read", rpc::encode(result)) ? exit_ok : exit_failure;
    if (!print("read", result.text)) return exit_failure;
    if (result.next_offset)
      report("read", "lines " + std::to_string(result.first_line) + "-" + std::to_string(result.last_line) +
                           " of " + std::to_string(result.total_lines) + "; continue with --offset " +
                           std::to_string(*result.next_offset));
    return exit_ok;
  });
}

}  // namespace

command add_read_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<read_options>();
  CLI::App* sub = add_daemon_subcommand(app, "read", "Print lines of a saved full text (an artifact) by its SHA-256");
  constexpr auto max_size = std::numeric_limits<std::size_t>::max();
  sub->add_option("sha256", options->params.sha256, "The artifact's SHA-256 (64 lowercase hex digits)")
      ->required()
      ->check(sha256_hex);
  sub->add_option("--offset", options->params.offset, "First line to print, 1-based")
      ->check(CLI::Range(std::size_t{1}, max_size))
      ->capture_default_str();
  sub->add_option("--limit", options->params.limit, "Most lines to print [to the end, within one page]")
      ->check(CLI::Range(std::size_t{1}, max_size));
  sub->add_flag("--json", options->json, "Print artifact/read's result as JSON");
  return command{sub, [daemon, options] { return run_read(*daemon, *options); }};
}

}  // namespace handoff::cli
