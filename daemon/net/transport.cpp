#include "net/transport.hpp"

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/read.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <spdlog/spdlog.h>

#include "runtime/as_tuple.hpp"
#include "config.hpp"

namespace handoff::daemon {
namespace {


// Bytes read from the socket per read call.
constexpr std::size_t read_chunk_bytes = 64 * 1024;

}  // namespace

transport::transport(socket_type socket, const config& cfg, frame_sink& sink, std::uint64_t id)
    : socket_(std::move(socket)),
      cfg_(cfg),
      sink_(sink),
      id_(id),
      decoder_(cfg.max_frame_bytes),
      wake_writer_(socket_.get_executor()),
      watchdog_timer_(socket_.get_executor()) {
  wake_writer_.expires_at(std::chrono::steady_clock::time_point::max());
}

void transport::start(const std::shared_ptr<void>& owner) {
  // send() writes directly when the outbox is empty; that write must never block the I/O
  // thread (asio's async operations work the same in either mode).
  asio::error_code ec;
  socket_.non_blocking(true, ec);
  if (ec) spdlog::warn("connection {}: cannot make the socket non-blocking: {}", id_, ec.message());
  asio::co_spawn(socket_.get_executor(), [this, owner] { return read_loop(owner); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [this, owner] { return write_loop(owner); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [this, owner] { return watchdog(owner); }, asio::detached);
}

void transport::close(std::string_view why) {
  if (!open_) return;
  open_ = false;
  spdlog::debug("connection {}: closed ({})", id_, why);
  asio::error_code ignored;
  socket_.shutdown(socket_type::shutdown_both, ignored);
  socket_.close(ignored);
  wake_writer_.cancel();
  watchdog_timer_.cancel();
  for (auto& out : outbox_)
    if (out.on_written) out.on_written(false);
  outbox_.clear();
  outbox_bytes_ = 0;
  sink_.on_closed();
}

void transport::close_after_drain() {
  if (!open_) return;
  draining_ = true;
  asio::error_code ignored;
  socket_.shutdown(socket_type::shutdown_receive, ignored);
  close_if_drained();
}

void transport::close_if_drained() {
  // Half-closed or shutting down: every request read so far still gets its reply.
  if (open_ && draining_ && outbox_.empty() && !sink_.busy()) close("drained");
}

void transport::send(std::string payload, std::function<void(bool)> on_written) {
  if (!open_) {
    if (on_written) on_written(false);
    return;
  }
  std::string bytes = rpc::encode_frame(payload, decoder_.mode());
  if (outbox_.empty()) {  // no write in progress (the writer keeps its frame queued while writing)
    const auto written = write_now(bytes);
    if (!written) {
      if (on_written) on_written(false);
      return;
    }
    if (*written == bytes.size()) {
      if (on_written) on_written(true);
      if (draining_) wake_writer_.cancel_one();  // the writer closes a drained connection
      return;
    }
    bytes.erase(0, *written);  // the writer sends the rest
  }
  if (outbox_bytes_ + bytes.size() > cfg_.max_outbox_bytes && !outbox_.empty()) {
    spdlog::warn("connection {}: outbox over {} bytes (client not reading); dropping it", id_,
                 cfg_.max_outbox_bytes);
    if (on_written) on_written(false);
    close("outbox full");
    return;
  }
  outbox_bytes_ += bytes.size();
  outbox_.push_back({std::move(bytes), std::move(on_written)});
  wake_writer_.cancel_one();
}

std::optional<std::size_t> transport::write_now(std::string_view bytes) {
  asio::error_code ec;
  const std::size_t n = socket_.write_some(asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return 0;
  if (ec) {
    close(ec.message());
    return std::nullopt;
  }
  return n;
}

asio::awaitable<bool> transport::send_and_wait(std::string payload) {
  asio::steady_timer done(socket_.get_executor(), std::chrono::steady_clock::time_point::max());
  std::optional<bool> written;
  // The callback may run after this frame is gone only if the connection outlives it, which
  // cannot happen: close() and the writer call it before we resume.
  send(std::move(payload), [&written, &done](bool ok) {
    written = ok;
    done.cancel();
  });
  while (!written) co_await done.async_wait(as_tuple);
  co_return *written;
}

asio::awaitable<void> transport::read_loop([[maybe_unused]] std::shared_ptr<void> owner) {
  std::string chunk(read_chunk_bytes, '\0');
  while (open_ && !draining_) {
    auto [ec, n] = co_await socket_.async_read_some(asio::buffer(chunk), as_tuple);
    if (ec == asio::error::eof) {  // the client finished sending; answer what it asked
      draining_ = true;
      sink_.on_input_closed();
      close_if_drained();
      co_return;
    }
    if (ec) {
      if (!draining_) close(ec.message());
      co_return;
    }
    decoder_.feed(std::string_view(chunk.data(), n));
    try {
      while (open_) {
        auto frame = decoder_.next();
        if (!frame) break;
        partial_since_ = {};  // any complete frame restarts the slow-frame clock
        sink_.on_frame(std::move(*frame));
      }
    } catch (const std::exception& e) {  // a malformed header block: the stream is lost
      sink_.on_stream_error(rpc::errc::parse_error, e.what());
      co_return;
    }
    const bool was_partial = partial_since_ != std::chrono::steady_clock::time_point{};
    partial_since_ = !decoder_.in_frame() ? std::chrono::steady_clock::time_point{}
                     : was_partial        ? partial_since_
                                          : std::chrono::steady_clock::now();
    if (!was_partial && decoder_.in_frame()) watchdog_timer_.cancel();  // a frame started: set its deadline
  }
}

asio::awaitable<void> transport::write_loop([[maybe_unused]] std::shared_ptr<void> owner) {
  while (open_) {
    if (outbox_.empty()) {
      close_if_drained();
      if (!open_) co_return;
      co_await wake_writer_.async_wait(as_tuple);
      continue;
    }
    auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(outbox_.front().bytes), as_tuple);
    if (ec || !open_) {
      close(ec ? ec.message() : "closed");
      co_return;
    }
    outgoing done = std::move(outbox_.front());
    outbox_.pop_front();
    outbox_bytes_ -= done.bytes.size();
    if (done.on_written) done.on_written(true);
  }
}

asio::awaitable<void> transport::watchdog([[maybe_unused]] std::shared_ptr<void> owner) {
  // Asleep while no frame is partly read (the reader wakes it when one starts), so an idle
  // connection costs the I/O thread no wake-ups; otherwise until that frame's deadline.
  const auto limit = std::chrono::milliseconds(cfg_.frame_timeout_ms);
  while (open_) {
    const bool partial = partial_since_ != std::chrono::steady_clock::time_point{};
    if (partial && std::chrono::steady_clock::now() - partial_since_ > limit) {
      spdlog::warn("connection {}: a frame took over {} ms to arrive; closing", id_, limit.count());
      sink_.on_stream_error(rpc::errc::request_timeout, "frame not completed in time");
      co_return;
    }
    watchdog_timer_.expires_at(partial ? partial_since_ + limit + std::chrono::milliseconds(1)
                                       : std::chrono::steady_clock::time_point::max());
    co_await watchdog_timer_.async_wait(as_tuple);
  }
}

}  // namespace handoff::daemon
