// The accept loop: peer checks, the connection cap, and graceful shutdown on SIGTERM/SIGINT.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/signal_set.hpp>

#include "config.hpp"
#include "connection.hpp"
#include "service.hpp"

namespace handoff::daemon {

class server {
 public:
  // Takes ownership of `listen_fd`, a bound and listening Unix stream socket.
  server(asio::io_context& io, const config& cfg, service& svc, int listen_fd);

  // Spawns the accept loop and the signal watcher.
  void start();
  // Stops accepting, ends waits, lets replies in flight drain, then lets io.run() return.
  void stop();
  // Runs once, first thing in stop(): the daemon is going down (STOPPING=1, timers cancelled).
  void on_stop(std::function<void()> hook) { on_stop_ = std::move(hook); }

 private:
  asio::awaitable<void> accept_loop();
  // After stop(): waits until every connection has closed (at most the grace period), then stops.
  asio::awaitable<void> drain_then_stop();

  asio::io_context& io_;
  const config& cfg_;
  service& service_;
  asio::local::stream_protocol::acceptor acceptor_;
  asio::signal_set signals_;
  std::unordered_map<std::uint64_t, std::weak_ptr<connection>> connections_;
  std::uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::function<void()> on_stop_;
};

}  // namespace handoff::daemon
