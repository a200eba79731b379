// `handoff hook claude-code [--deliver]`: reads one hook input on stdin, prints its answer
// (hook.hpp, background.hpp).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cli/harness/hook_input.hpp"
#include "cli/harness/claude_code/entry.hpp"
#include "cli/harness/claude_code/hook.hpp"
#include "cli/harness/claude_code/spool.hpp"

namespace handoff::cli::claude_code {
namespace {

int run_hook(const daemon_options& daemon, bool deliver) {
  hook_settings settings;
  static_cast<hook_core::hook_settings&>(settings) = hook_core::hook_settings_from_environment(daemon.socket);
  if (!settings.context_window) settings.context_window = positive_env("CLAUDE_CODE_MAX_CONTEXT_TOKENS");
  settings.spool_base = spool_base();
  if (const char* attended = std::getenv("CLAUDE_CODE_SESSION_ATTENDED"); attended != nullptr)
    settings.attended = std::string_view(attended) != "0";
  if (deliver) {
    // Claude Code wakes the model with stderr when an asyncRewake hook exits 2.
    const bool handed = run_claude_code_deliverer(read_hook_stdin(max_hook_input_bytes), settings, [](const std::string& text) {
      if (std::fwrite(text.data(), 1, text.size(), stderr) != text.size() || std::fflush(stderr) != 0)
        throw std::runtime_error("stderr");
    });
    return handed ? 2 : exit_ok;
  }
  const std::string out = run_claude_code_hook(read_hook_stdin(max_hook_input_bytes), settings);
  if (!out.empty()) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  return exit_ok;  // never fail the tool call: its own output stands when nothing is printed
}

}  // namespace

run_fn add_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  app.fallthrough();
  auto deliver = std::make_shared<bool>(false);
  app.add_flag("--deliver", *deliver,
               "The asyncRewake UserPromptSubmit hook: hand the bounded background reports over (stderr, exit 2)");
  app.footer(
      "Environment: HANDOFF_CONTEXT_WINDOW (else CLAUDE_CODE_MAX_CONTEXT_TOKENS): the parent model's context "
      "window, tokens, for the dynamic budget (unknown: static caps); HANDOFF_HOOK_SIBLINGS_WAIT_MS: how long a "
      "result waits for the turn's other agents [1500000]. Exits 0, or 2 with --deliver when it hands reports over.");
  return [daemon, deliver] { return run_hook(*daemon, *deliver); };
}

}  // namespace handoff::cli::claude_code
