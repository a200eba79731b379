// `handoff hook cline`: reads one input on stdin, prints spawn_agent's new result (hook.hpp).

#include <cstdio>
#include <memory>
#include <string>

#include "cli/harness/cline/entry.hpp"
#include "cli/harness/cline/hook.hpp"
#include "cli/harness/hook_input.hpp"

namespace handoff::cli::cline {
namespace {

int run_hook_command(const daemon_options& daemon) {
  const std::string out = run_hook(read_hook_stdin(hook_core::max_hook_input_bytes),
                                   cline_settings(hook_core::hook_settings_from_environment(daemon.socket)));
  // Exactly the new result, no newline added: the plugin returns it as it is.
  if (!out.empty() && (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0))
    return exit_failure;
  return exit_ok;  // nothing printed: the result stands
}

}  // namespace

run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  app.fallthrough();
  app.footer(
      "Run by handoff's cline plugin (handoff setup cline) when a spawn_agent call finishes: one JSON input on "
      "stdin, the call's new result on stdout (nothing: it stands). Environment: HANDOFF_CONTEXT_WINDOW: the parent "
      "model's window, tokens, when cline names none; HANDOFF_HOOK_SIBLINGS_WAIT_MS: how long a result waits for "
      "the turn's other subagents [1200, at most]. Always exits 0 unless stdout fails.");
  return [daemon] { return run_hook_command(*daemon); };
}

}  // namespace handoff::cli::cline
