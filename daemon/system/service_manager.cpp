#include "system/service_manager.hpp"

#include <string>

#include <spdlog/spdlog.h>

namespace handoff::daemon {

service_manager::service_manager(asio::io_context& io)
    : notifier_(notifier::from_environment()), timer_(io) {
  if (!notifier_.problem().empty()) spdlog::warn("{}", notifier_.problem());
  if (notifier_.enabled()) interval_ = watchdog_interval_from_environment();
}

void service_manager::ready(std::string_view status) {
  send("READY=1\nSTATUS=" + std::string(status));
  if (interval_ && !pinging_) {
    pinging_ = true;
    spdlog::debug("watchdog: pinging every {} ms", interval_->count() / 1000);
    ping_and_rearm();
  }
}

void service_manager::stopping() {
  pinging_ = false;
  timer_.cancel();
  send("STOPPING=1\nSTATUS=shutting down");
}

void service_manager::send(std::string_view message) const {
  if (const std::string problem = notifier_.send(message); !problem.empty()) spdlog::warn("{}", problem);
}

void service_manager::ping_and_rearm() {
  send("WATCHDOG=1");
  timer_.expires_after(*interval_);
  timer_.async_wait([this](const asio::error_code& ec) {
    if (!ec && pinging_) ping_and_rearm();
  });
}

}  // namespace handoff::daemon
