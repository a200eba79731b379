// `handoff hook copilot [--store DIR]...`: reads one hook input on stdin, prints its answer (hook.hpp).

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/harness/copilot/entry.hpp"
#include "cli/harness/copilot/hook.hpp"
#include "cli/harness/core/hook_settings.hpp"
#include "cli/harness/hook_input.hpp"

namespace handoff::cli::copilot {
namespace {

int run_hook_command(const daemon_options& daemon, const std::vector<std::string>& stores) {
  const hook_core::hook_settings settings = hook_core::hook_settings_from_environment(daemon.socket);
  const hook_answer answer = run_hook(read_hook_stdin(hook_core::max_hook_input_bytes), settings, stores);
  if (!answer.out.empty()) {
    std::fwrite(answer.out.data(), 1, answer.out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  if (!answer.note.empty()) std::fprintf(stderr, "%s\n", answer.note.c_str());
  return exit_ok;  // never fail the subagent: its own answer stands when nothing is printed
}

}  // namespace

run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  auto stores = std::make_shared<std::vector<std::string>>();
  app.fallthrough();
  app.add_option("--store", *stores,
                 "preToolUse: an artifact store whose full texts Copilot's view may read without asking (repeatable)");
  app.footer(
      "Environment: HANDOFF_CONTEXT_WINDOW: the parent model's context window, tokens [Copilot's maxPromptTokens]; "
      "HANDOFF_HOOK_SIBLINGS_WAIT_MS: how long a result waits for its turn's other subagents [1500000]. Always "
      "exits 0.");
  return [daemon, stores] { return run_hook_command(*daemon, *stores); };
}

}  // namespace handoff::cli::copilot
