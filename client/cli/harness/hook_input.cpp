#include "cli/harness/hook_input.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <stdexcept>
#include <string>
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

namespace {

// The whole of `text` as a decimal number of type T: no sign, space or suffix.
template <typename T>
std::optional<T> whole_number(std::string_view text) {
  T n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return n;
}

}  // namespace

std::optional<std::int64_t> positive_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  const auto n = whole_number<std::int64_t>(value);
  return n && *n > 0 ? n : std::nullopt;
}

std::size_t bounded_env(const char* name, std::size_t fallback, std::size_t low, std::size_t high) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  const auto n = whole_number<std::size_t>(value);
  if (!n || *n < low || *n > high)
    throw std::invalid_argument(std::string(name) + " must be a whole number from " + std::to_string(low) + " to " +
                                std::to_string(high) + " (it is '" + value + "')");
  return *n;
}

}  // namespace handoff::cli
