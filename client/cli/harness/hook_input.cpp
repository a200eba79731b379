#include "cli/harness/hook_input.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace handoff::cli {

std::string read_hook_stdin(std::size_t most) {
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

std::optional<std::int64_t> positive_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  std::int64_t n = 0;
  const std::string_view text(value);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc{} || end != text.data() + text.size() || n <= 0) return std::nullopt;
  return n;
}

}  // namespace handoff::cli
