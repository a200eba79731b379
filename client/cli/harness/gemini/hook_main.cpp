// `handoff hook gemini`: reads one hook input on stdin, prints its answer (hook.hpp).

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cli/harness/claude_code/hook.hpp"
#include "cli/harness/hook_input.hpp"
#include "cli/harness/gemini/entry.hpp"
#include "cli/harness/gemini/hook.hpp"

namespace handoff::cli {
namespace gemini_detail {
namespace {

int run_gemini(const daemon_options& daemon) {
  gemini_hook_settings settings;
  settings.socket = daemon.socket;
  if (const auto window = positive_env("HANDOFF_CONTEXT_WINDOW")) settings.context_window = *window;
  if (const auto ms = positive_env("HANDOFF_HOOK_SIBLINGS_WAIT_MS")) settings.siblings_wait = std::chrono::milliseconds(*ms);
  const gemini_hook_answer answer = run_gemini_hook(read_hook_stdin(max_hook_input_bytes), settings);
  if (!answer.out.empty()) {
    std::fwrite(answer.out.data(), 1, answer.out.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  if (!answer.note.empty()) std::fprintf(stderr, "%s\n", answer.note.c_str());
  return exit_ok;  // never fail the tool call: its own result stands when nothing is printed
}

}  // namespace
}  // namespace gemini_detail

run_fn add_gemini_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  app.fallthrough();
  app.footer(
      "Environment: HANDOFF_CONTEXT_WINDOW: the parent model's context window, tokens [1048576]; "
      "HANDOFF_HOOK_SIBLINGS_WAIT_MS: how long a result waits for its turn's other subagents [1500000]. Always "
      "exits 0.");
  return [daemon] { return gemini_detail::run_gemini(*daemon); };
}

}  // namespace handoff::cli
