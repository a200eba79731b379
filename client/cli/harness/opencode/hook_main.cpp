// `handoff hook opencode`: reads one input on stdin, prints the task's new output (hook.hpp).

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cli/harness/hook_input.hpp"
#include "cli/harness/opencode/entry.hpp"
#include "cli/harness/opencode/hook.hpp"

namespace handoff::cli::opencode {
namespace {

int run_hook_command(const daemon_options& daemon) {
  const std::string out = run_hook(read_hook_stdin(hook_core::max_hook_input_bytes),
                                   hook_core::hook_settings_from_environment(daemon.socket));
  // Exactly the new output, no newline added: the plugin puts it in output.output as it is.
  if (!out.empty() && (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0))
    return exit_failure;
  return exit_ok;  // nothing printed: the task's output stands
}

}  // namespace

run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  app.fallthrough();
  app.footer(
      "Run by handoff's opencode plugin (handoff setup opencode) when a task call finishes: one JSON input on "
      "stdin, the task's new output on stdout (nothing: it stands). Environment: HANDOFF_CONTEXT_WINDOW: the "
      "parent model's window, tokens, when opencode names none; HANDOFF_HOOK_SIBLINGS_WAIT_MS: how long a result "
      "waits for the step's other tasks [1500000]. Always exits 0 unless stdout fails.");
  return [daemon] { return run_hook_command(*daemon); };
}

}  // namespace handoff::cli::opencode
