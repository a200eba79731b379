#include "net/server.hpp"

#include <csignal>
#include <poll.h>
#include <unistd.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/steady_timer.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "runtime/as_tuple.hpp"
#include "net/listener.hpp"

namespace handoff::daemon {
namespace {


// How long replies in flight may take to drain at shutdown before the loop is stopped anyway.
constexpr auto shutdown_grace = std::chrono::seconds(5);

// An idle exit's pause between hiding the socket and looking at its backlog: a connect() that
// had resolved the path before the rename lands in the backlog within it.
constexpr auto hide_settle = std::chrono::milliseconds(20);

}  // namespace

server::server(asio::io_context& io, const config& cfg, served& svc, int listen_fd)
    : io_(io),
      cfg_(cfg),
      service_(svc),
      acceptor_(io, asio::local::stream_protocol(), listen_fd),
      signals_(io, SIGTERM, SIGINT) {}

void server::start() {
  asio::co_spawn(io_, accept_loop(), asio::detached);
  signals_.async_wait([this](const asio::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signo);
    stop();
  });
}

void server::stop() {
  if (stopping_) return;
  stopping_ = true;
  if (on_stop_) on_stop_();
  asio::error_code ignored;
  acceptor_.close(ignored);
  signals_.cancel(ignored);
  service_.shutdown();
  for (auto& [id, weak] : connections_)
    if (auto conn = weak.lock()) conn->close_after_drain();
  asio::co_spawn(io_, drain_then_stop(), asio::detached);
}

asio::awaitable<void> server::drain_then_stop() {
  // Connections close themselves once their replies are written, and an auto-delivery in
  // progress gets its answer (or its connection closes); an idle daemon stops at once.
  // The grace period is the last resort for a client that never reads its replies.
  // Both counts wake this when they reach zero; one may rise again while the other drains.
  const auto deadline = std::chrono::steady_clock::now() + shutdown_grace;
  bool drained = false;
  while (!drained && std::chrono::steady_clock::now() < deadline) {
    const bool no_connections = co_await service_.connections().zero(deadline);
    const bool no_flushes = co_await service_.flushes().zero(deadline);
    drained = no_connections && no_flushes && service_.connections().count() == 0;
  }
  if (service_.connections().count() > 0) {
    spdlog::warn("{} connection(s) still open after the shutdown grace period; closing them",
                 service_.connections().count());
    for (auto& [id, weak] : connections_)
      if (auto conn = weak.lock()) conn->close("shutdown grace period over");
  }
  io_.stop();
}

void server::exit_when_idle(std::chrono::milliseconds idle, listener& own) {
  asio::co_spawn(io_, idle_watch(idle, own), asio::detached);
}

bool server::backlog_waiting() {
  pollfd p{acceptor_.native_handle(), POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

asio::awaitable<void> server::idle_watch(std::chrono::milliseconds idle, listener& own) {
  asio::steady_timer timer(io_);
  while (!stopping_) {
    co_await service_.connections().zero(std::chrono::steady_clock::time_point::max());
    // Idle since the last connection closed; one that came and went meanwhile starts it again.
    const std::uint64_t opened = next_id_;
    const auto since = service_.connections().zero_since();
    timer.expires_at(since + idle);
    co_await timer.async_wait(as_tuple);
    if (stopping_) co_return;
    const bool quiet = next_id_ == opened && service_.connections().count() == 0 &&
                       service_.connections().zero_since() == since && service_.flushes().count() == 0;
    if (!quiet) continue;
    if (!own.hide()) {
      spdlog::warn("idle exit: cannot move {} aside; staying up", own.path().string());
      timer.expires_after(idle);
      co_await timer.async_wait(as_tuple);
      continue;
    }
    timer.expires_after(hide_settle);
    co_await timer.async_wait(as_tuple);
    if (stopping_) co_return;
    if (backlog_waiting() || next_id_ != opened || service_.connections().count() != 0) {
      if (!own.restore()) {
        spdlog::error("idle exit: cannot put {} back; exiting", own.path().string());
        stop();
        co_return;
      }
      continue;
    }
    spdlog::info("no connection for {} ms and nothing to deliver: exiting (queued results stay on disk)",
                 idle.count());
    stop();
    co_return;
  }
}

asio::awaitable<void> server::accept_loop() {
  while (!stopping_) {
    auto [ec, socket] = co_await acceptor_.async_accept(as_tuple);
    if (ec) {
      if (stopping_ || ec == asio::error::operation_aborted) co_return;
      spdlog::warn("accept failed: {}", ec.message());
      if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space) {
        asio::steady_timer pause(io_, std::chrono::milliseconds(100));
        co_await pause.async_wait(as_tuple);
      }
      continue;
    }
    std::erase_if(connections_, [](const auto& kv) { return kv.second.expired(); });

    peer_credentials peer;
    if (!read_peer_credentials(socket.native_handle(), peer) || peer.uid != ::geteuid()) {
      spdlog::warn("refused a connection from uid {} pid {} (only uid {} may connect)", peer.uid, peer.pid,
                   ::geteuid());
      continue;  // the socket closes as it goes out of scope; nothing is read from a stranger
    }
    const std::uint64_t id = next_id_++;
    if (service_.connections().count() >= cfg_.max_connections) {
      spdlog::warn("refused connection {} from pid {}: {} connections open", id, peer.pid, cfg_.max_connections);
      std::string bye = rpc::make_error(nullptr, rpc::errc::too_many_connections,
                                        "too many connections (" + std::to_string(cfg_.max_connections) +
                                            "); try again later") + "\n";
      asio::error_code ignored;
      socket.non_blocking(true, ignored);
      ::send(socket.native_handle(), bye.data(), bye.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      continue;
    }
    auto conn = std::make_shared<connection>(std::move(socket), cfg_, service_, id);
    service_.connection_opened();
    connections_.emplace(id, conn);
    spdlog::debug("connection {} from pid {}", id, peer.pid);
    conn->start();
  }
}

}  // namespace handoff::daemon
