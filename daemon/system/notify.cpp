#include "system/notify.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <unistd.h>

#include "system/environment.hpp"

namespace handoff::daemon {

notifier notifier::from_environment() { return notifier(env_or_empty("NOTIFY_SOCKET")); }

notifier::notifier(std::string_view address) : address_(address) {
  if (address.empty()) return;
  addr_.sun_family = AF_UNIX;
  if (address.size() < 2 || address.size() >= sizeof addr_.sun_path ||
      (address.front() != '/' && address.front() != '@')) {
    problem_ = "NOTIFY_SOCKET \"" + address_ + "\" is neither an absolute path nor an @abstract name " +
               "short enough for a Unix socket; not notifying the service manager";
    return;
  }
  std::memcpy(addr_.sun_path, address.data(), address.size());
  std::size_t used = address.size();
  if (address.front() == '@') {
    addr_.sun_path[0] = '\0';  // abstract: the name is exactly these bytes, without a terminator
  } else {
    ++used;  // a path goes with its terminating NUL (addr_ was zeroed)
  }
  addr_len_ = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + used);
  fd_ = unique_fd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd_) problem_ = std::string("cannot create the notification socket: ") + std::strerror(errno);
}

std::string notifier::send(std::string_view message) const {
  if (!fd_) return {};
  ssize_t sent = -1;
  do {
    sent = ::sendto(fd_.get(), message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT,
                    reinterpret_cast<const sockaddr*>(&addr_), addr_len_);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return "cannot notify " + address_ + ": " + std::strerror(errno);
  if (static_cast<std::size_t>(sent) != message.size()) return "short notification to " + address_;
  return {};
}

std::optional<std::chrono::microseconds> watchdog_interval_from_environment() {
  const std::string pid_text = env_or_empty("WATCHDOG_PID");
  if (!pid_text.empty()) {
    const auto pid = parse_decimal<pid_t>(pid_text);
    if (!pid || *pid != ::getpid()) return std::nullopt;
  }
  const auto usec = parse_decimal<std::uint64_t>(env_or_empty("WATCHDOG_USEC"));
  if (!usec || *usec == 0) return std::nullopt;
  return std::chrono::microseconds(std::max<std::uint64_t>(*usec / 2, 1));
}

}  // namespace handoff::daemon
