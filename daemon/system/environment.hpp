// Reading the variables a service manager passes (LISTEN_*, NOTIFY_SOCKET, WATCHDOG_*):
// strictly, since a misread pid or count would make us adopt or ping for the wrong process.
#pragma once

#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace handoff::daemon {

// The variable's value, or "" when it is unset.
inline std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// A whole unsigned or signed decimal number and nothing else ("", "12x", " 1" and out-of-range
// values are nullopt).
template <class T>
std::optional<T> parse_decimal(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace handoff::daemon
