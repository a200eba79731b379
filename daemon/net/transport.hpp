// One client connection's bytes: framing in, one writer draining a bounded outbox, and a
// watchdog for a frame that started and does not complete. It knows frames, not requests,
// replies or cancellation: those are the session's (connection.hpp), which sits on top of it
// and receives each frame through frame_sink.
//
// Everything here runs on the single I/O thread; no locks. The reader, writer and watchdog
// coroutines each hold the owner start() is given, so the transport (a member of it) lives as
// long as any of them runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <asio/awaitable.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>

#include "protocol/framing.hpp"
#include "protocol/jsonrpc.hpp"

namespace handoff::daemon {

struct config;

// What the transport hands up, and what it asks of the session above.
class frame_sink {
 public:
  virtual ~frame_sink() = default;
  // One complete frame (an oversized one too: frame.oversized, its bytes skipped).
  virtual void on_frame(rpc::decoded_frame frame) = 0;
  // The stream cannot go on (a malformed header block; a frame that took too long): the
  // session answers with `code` and closes after its replies are written.
  virtual void on_stream_error(rpc::errc code, const std::string& message) = 0;
  // The client shut down its sending side; replies can still be written.
  virtual void on_input_closed() = 0;
  // The transport closed: nothing more is read or written.
  virtual void on_closed() = 0;
  // Replies still to come: a draining transport closes only once this is false.
  virtual bool busy() const = 0;
};

class transport {
 public:
  using socket_type = asio::local::stream_protocol::socket;

  transport(socket_type socket, const config& cfg, frame_sink& sink, std::uint64_t id);

  // Spawns the reader, writer and frame watchdog, each holding `owner`.
  void start(const std::shared_ptr<void>& owner);
  // Closes at once: pending writes are dropped (their callbacks get false).
  void close(std::string_view why);
  // Stops reading; closes once the outbox has drained and the session is not busy.
  void close_after_drain();
  // Closes now if draining, the outbox is empty and the session is not busy.
  void close_if_drained();

  // Sends one JSON text as a frame. `on_written(true)` once it was written, `(false)` if the
  // connection closed first; either may run before send() returns. With the outbox empty the
  // bytes are written at once with one non-blocking write, and only what the socket did not
  // take is queued for the writer; otherwise they are queued behind the rest, so frames never
  // interleave. Exceeding the outbox cap closes the connection (a client that does not read
  // cannot grow our memory).
  void send(std::string payload, std::function<void(bool)> on_written = {});
  // Same, resuming when the bytes were written (true) or the connection closed (false).
  asio::awaitable<bool> send_and_wait(std::string payload);

  asio::any_io_executor executor() { return socket_.get_executor(); }
  bool is_open() const noexcept { return open_; }
  // False once the client stopped sending (EOF) or the daemon stopped reading (shutdown).
  bool is_reading() const noexcept { return open_ && !draining_; }

 private:
  struct outgoing {
    std::string bytes;
    std::function<void(bool)> on_written;
  };

  // Each coroutine's `owner` parameter lives in its frame: what keeps the transport alive.
  asio::awaitable<void> read_loop(std::shared_ptr<void> owner);
  asio::awaitable<void> write_loop(std::shared_ptr<void> owner);
  asio::awaitable<void> watchdog(std::shared_ptr<void> owner);
  // Writes as much of `bytes` as the socket takes now without blocking; returns how much, or
  // nullopt after closing the connection on a write error.
  std::optional<std::size_t> write_now(std::string_view bytes);

  socket_type socket_;
  const config& cfg_;
  frame_sink& sink_;
  std::uint64_t id_;
  rpc::frame_decoder decoder_;
  std::deque<outgoing> outbox_;
  std::size_t outbox_bytes_ = 0;
  asio::steady_timer wake_writer_;
  asio::steady_timer watchdog_timer_;
  std::chrono::steady_clock::time_point partial_since_{};
  bool open_ = true;
  bool draining_ = false;  // no more reading: close once replies in flight are written
};

}  // namespace handoff::daemon
