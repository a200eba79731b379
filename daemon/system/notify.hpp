// Telling the service manager how we are: the sd_notify(3) protocol, implemented directly (one
// datagram per message) rather than by linking libsystemd.
//
// The manager passes NOTIFY_SOCKET, an AF_UNIX datagram socket given either as a filesystem
// path ("/run/user/1000/systemd/notify") or as an abstract name ("@name", the '@' standing for
// the leading NUL). A message is newline-separated KEY=VALUE assignments; handoffd sends
//   READY=1      once the queue is recovered and the socket listens (Type=notify)
//   STOPPING=1   when it starts shutting down
//   WATCHDOG=1   periodically while the event loop turns (WatchdogSec=)
//   STATUS=...   a line for `systemctl --user status`
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <sys/un.h>

#include "engine/fs/posix_io.hpp"

namespace handoff::daemon {

class notifier {
 public:
  // Reads NOTIFY_SOCKET. Without it every send is a no-op, so the daemon runs the same when
  // started by hand. A value that is neither "/path" nor "@name", or too long for sun_path,
  // leaves the notifier disabled with problem() saying why.
  static notifier from_environment();
  // The same for an explicit address (tests; "" disables).
  explicit notifier(std::string_view address);

  bool enabled() const noexcept { return static_cast<bool>(fd_); }
  // Why the address was refused, or "" when it was fine (or absent).
  const std::string& problem() const noexcept { return problem_; }

  // Sends `message` as one datagram. Never blocks (a manager that does not read loses the
  // message, as with sd_notify). Returns "" or what failed, in plain words; a disabled
  // notifier returns "" and sends nothing.
  std::string send(std::string_view message) const;

 private:
  unique_fd fd_;          // our unbound datagram socket; none when disabled
  std::string address_;   // as given: "/path" or "@name"
  sockaddr_un addr_{};    // address_ as the kernel takes it
  socklen_t addr_len_ = 0;
  std::string problem_;
};

// The watchdog ping interval: half of WATCHDOG_USEC, as sd_watchdog_enabled(3) advises, or
// nullopt when WATCHDOG_USEC is unset, not a positive number, or WATCHDOG_PID names another
// process (the pings are then some other process's job).
std::optional<std::chrono::microseconds> watchdog_interval_from_environment();

}  // namespace handoff::daemon
