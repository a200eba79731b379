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
#include "net/connection.hpp"
#include "net/listener.hpp"
#include "net/served.hpp"

namespace handoff::daemon {

class server {
 public:
  // Takes ownership of `listen_fd`, a bound and listening Unix stream socket.
  server(asio::io_context& io, const config& cfg, served& svc, int listen_fd);

  // Spawns the accept loop and the signal watcher.
  void start();
  // Stops accepting, ends waits, lets replies in flight drain, then lets io.run() return.
  void stop();
  // Runs once, first thing in stop(): the daemon is going down (STOPPING=1, timers cancelled).
  void on_stop(std::function<void()> hook) { on_stop_ = std::move(hook); }
  // After start(): stop() once no connection has been open, and no auto-delivery running, for
  // `idle`. The socket is hidden first (listener::hide) and the backlog checked, so that a client
  // that connected in that instant is served (the socket restored) instead of being cut off.
  void exit_when_idle(std::chrono::milliseconds idle, listener& own);

 private:
  asio::awaitable<void> accept_loop();
  // After stop(): waits until every connection has closed (at most the grace period), then stops.
  asio::awaitable<void> drain_then_stop();
  asio::awaitable<void> idle_watch(std::chrono::milliseconds idle, listener& own);
  // True when a connection waits in the listening socket's backlog, not yet accepted.
  bool backlog_waiting();

  asio::io_context& io_;
  const config& cfg_;
  served& service_;
  asio::local::stream_protocol::acceptor acceptor_;
  asio::signal_set signals_;
  std::unordered_map<std::uint64_t, std::weak_ptr<connection>> connections_;
  std::uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::function<void()> on_stop_;
};

}  // namespace handoff::daemon
