// `handoff complete --parent P --child C [--title T] [--status done|error|cancelled]
//                   [--error TEXT] [--json] [FILE|-]`
//
// subagent/completed: hands the child's final text to handoffd, which holds it durably once
// this returns 0. The text is FILE's bytes, or standard input's for "-" (the default), exactly:
// no newline is added or removed. It must be UTF-8 (JSON carries nothing else); other bytes are
// refused, not replaced. Re-sending the same completion is harmless (reported as a duplicate).
//
// Prints the size, line count and SHA-256 the daemon recorded; --json prints the result.
#include "cli/complete_command.hpp"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

namespace handoff::cli {
namespace {

struct complete_options {
  rpc::completed_params params;
  std::string input = "-";
  bool json = false;
};

// All bytes of `path` ("-": standard input), or nullopt after saying why.
std::optional<std::string> read_input(const std::string& path) {
  const bool from_stdin = path == "-";
  std::FILE* file = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    report("complete", "cannot open " + path + ": " + std::strerror(errno));
    return std::nullopt;
  }
  std::string text;
  char chunk[64 * 1024];
  std::size_t got = 0;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, got);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  if (!from_stdin) std::fclose(file);
  if (failed) {
    report("complete", "cannot read " + (from_stdin ? std::string("standard input") : path) + ": " +
                             std::strerror(error));
    return std::nullopt;
  }
  return text;
}

std::string render(const rpc::completed_params& p, const rpc::completed_result& r) {
  std::string out = "completed child " + p.child_id + " of parent " + p.parent_id + " (" + p.status + "): " +
                    std::to_string(r.bytes) + " bytes, " + std::to_string(r.lines) + " lines, sha256 " + r.sha256;
  if (r.duplicate) out += " (a duplicate: handoffd already held it)";
  return out + "\n";
}

int run_complete(const daemon_options& daemon, complete_options& options) {
  std::optional<std::string> text = read_input(options.input);
  if (!text) return exit_failure;
  options.params.final_text = std::move(*text);
  return with_client("complete", daemon, [&](client::connection& c, const rpc::initialize_result&) {
    const rpc::completed_result result = c.completed(options.params);
    return print_result("complete", options.json, result, [&] { return render(options.params, result); });
  });
}

}  // namespace

command add_complete_command(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto options = std::make_shared<complete_options>();
  options->params.status = "done";
  CLI::App* sub = add_daemon_subcommand(app, "complete", "Hand a child's final text to handoffd (durable once done)");
  sub->add_option("--parent", options->params.parent_id, "The parent agent's id")->required();
  sub->add_option("--child", options->params.child_id, "The child's id")->required();
  sub->add_option("--title", options->params.title, "A short title shown with its result");
  sub->add_option("--status", options->params.status, "How the child ended")
      ->check(CLI::IsMember({"done", "error", "cancelled"}))
      ->capture_default_str();
  sub->add_option("--error", options->params.error, "The child's error text, if it failed");
  sub->add_option("file", options->input, "The final text, byte for byte; - reads standard input")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "Print subagent/completed's result as JSON");
  return command{sub, [daemon, options] { return run_complete(*daemon, *options); }};
}

}  // namespace handoff::cli
