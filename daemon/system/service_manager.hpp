// What handoffd tells the service manager that started it (systemd's Type=notify and
// WatchdogSec=; notify.hpp has the protocol): READY=1 once it serves, STOPPING=1 when it
// begins to shut down, and WATCHDOG=1 at half the watchdog timeout in between.
//
// The pings come from a timer on the I/O thread, so each one proves the event loop still
// turns: a daemon whose loop is stuck stops pinging and systemd restarts it
// (Restart=on-failure). Started by hand, without NOTIFY_SOCKET, all of this does nothing.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "system/notify.hpp"

namespace handoff::daemon {

class service_manager {
 public:
  // Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID (logging a malformed NOTIFY_SOCKET).
  explicit service_manager(asio::io_context& io);

  // READY=1 with a STATUS= line, and the first watchdog ping; the pings continue from here.
  void ready(std::string_view status);
  // STOPPING=1, and no ping after it (the loop must be free to run out of work).
  void stopping();

  bool watchdog_enabled() const noexcept { return interval_.has_value(); }

 private:
  void send(std::string_view message) const;
  void ping_and_rearm();

  notifier notifier_;
  std::optional<std::chrono::microseconds> interval_;  // half of WATCHDOG_USEC, when set for us
  asio::steady_timer timer_;
  bool pinging_ = false;
};

}  // namespace handoff::daemon
