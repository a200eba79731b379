// `handoff hook gemini`: reads one hook input on stdin, prints its answer (hook.hpp).
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "cli/harness/claude_code/hook.hpp"
#include "cli/harness/gemini/entry.hpp"
#include "cli/harness/gemini/hook.hpp"

namespace handoff::cli {
namespace gemini_detail {
namespace {

// All of stdin, up to one byte past `most` (then the hook passes the input by).
std::string gemini_stdin(std::size_t most) {
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

std::optional<std::int64_t> positive_number(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  std::int64_t n = 0;
  const std::string_view text(value);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n <= 0) return std::nullopt;
  return n;
}

int run_gemini(const daemon_options& daemon) {
  gemini_hook_settings settings;
  settings.socket = daemon.socket;
  if (const auto window = positive_number("HANDOFF_CONTEXT_WINDOW")) settings.context_window = *window;
  if (const auto ms = positive_number("HANDOFF_HOOK_SIBLINGS_WAIT_MS")) settings.siblings_wait = std::chrono::milliseconds(*ms);
  const gemini_hook_answer answer = run_gemini_hook(gemini_stdin(max_hook_input_bytes), settings);
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
