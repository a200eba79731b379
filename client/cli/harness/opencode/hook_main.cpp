// `handoff hook opencode`: reads one input on stdin, prints the task's new output (hook.hpp).
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cli/harness/opencode/entry.hpp"
#include "cli/harness/opencode/hook.hpp"

namespace handoff::cli {
namespace {

// All of stdin, up to one byte past `most` (then the hook passes the input by).
std::string read_all_stdin(std::size_t most) {
  std::string in;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    in.append(buffer, static_cast<std::size_t>(n));
    if (in.size() > most) break;
  }
  return in;
}

std::optional<std::int64_t> env_count(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  std::int64_t n = 0;
  const std::string_view text(value);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n <= 0) return std::nullopt;
  return n;
}

int run_opencode_hook_command(const daemon_options& daemon) {
  opencode_hook_settings settings;
  settings.socket = daemon.socket;
  settings.context_window = env_count("HANDOFF_CONTEXT_WINDOW");
  if (const auto ms = env_count("HANDOFF_HOOK_SIBLINGS_WAIT_MS")) settings.siblings_wait = std::chrono::milliseconds(*ms);
  const std::string out = run_opencode_hook(read_all_stdin(max_opencode_input_bytes), settings);
  // Exactly the new output, no newline added: the plugin puts it in output.output as it is.
  if (!out.empty() && (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0))
    return exit_failure;
  return exit_ok;  // nothing printed: the task's output stands
}

}  // namespace

run_fn add_opencode_hook(CLI::App& app, std::shared_ptr<const daemon_options> daemon) {
  app.fallthrough();
  app.footer(
      "Run by handoff's opencode plugin (handoff setup opencode) when a task call finishes: one JSON input on "
      "stdin, the task's new output on stdout (nothing: it stands). Environment: HANDOFF_CONTEXT_WINDOW: the "
      "parent model's window, tokens, when opencode names none; HANDOFF_HOOK_SIBLINGS_WAIT_MS: how long a result "
      "waits for the step's other tasks [1500000]. Always exits 0 unless stdout fails.");
  return [daemon] { return run_opencode_hook_command(*daemon); };
}

}  // namespace handoff::cli
