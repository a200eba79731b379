// One client connection: framing in, one writer draining a bounded outbox, and calls from the
// daemon to the client (context/usage, parent/deliver) matched to their replies.
//
// Everything here runs on the single I/O thread; no locks. The reader and writer coroutines
// hold a shared_ptr to the connection, so it lives as long as either runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include <asio/awaitable.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "protocol/framing.hpp"
#include "protocol/jsonrpc.hpp"

namespace handoff::daemon {

struct config;
class connection;

// What the connection hands upward: requests and notifications (already parsed), and its end.
class message_sink {
 public:
  virtual ~message_sink() = default;
  // Answers `msg` at once on the I/O thread when that needs neither the disk nor the pool nor
  // any wait: true when it was answered (its reply, or its error, sent; none for a
  // notification). False hands it to on_message, run as a coroutine of its own.
  virtual bool answer_now(const std::shared_ptr<connection>& conn, const rpc::message& msg) = 0;
  virtual asio::awaitable<void> on_message(std::shared_ptr<connection> conn, rpc::message msg) = 0;
  virtual void on_closed(const std::shared_ptr<connection>& conn) = 0;
  // The client shut down its sending side; replies can still be written.
  virtual void on_input_closed(const std::shared_ptr<connection>& conn) = 0;
};

// The outcome of a daemon -> client call.
struct call_outcome {
  enum class kind { result, error_reply, timeout, closed };
  kind how = kind::closed;
  nlohmann::json result;  // when how == result
  std::string error;      // plain words otherwise
  bool ok() const noexcept { return how == kind::result; }
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  using socket_type = asio::local::stream_protocol::socket;

  connection(socket_type socket, const config& cfg, message_sink& sink, std::uint64_t id);
  ~connection();

  // Spawns the reader, writer and frame watchdog.
  void start();
  // Closes at once: pending writes are dropped (their callbacks get false), calls end as closed.
  void close(std::string_view why);
  // Stops reading; closes once the outbox has drained (graceful shutdown).
  void close_after_drain();

  // Sends one JSON text. `on_written(true)` once it was written, `(false)` if the connection
  // closed first; either may run before send() returns. With the outbox empty the bytes are
  // written at once with one non-blocking write, and only what the socket did not take is
  // queued for the writer; otherwise they are queued behind the rest, so frames never
  // interleave. Exceeding the outbox cap closes the connection (a client that does not read
  // cannot grow our memory).
  void send(std::string payload, std::function<void(bool)> on_written = {});
  // Same, resuming when the bytes were written (true) or the connection closed (false).
  asio::awaitable<bool> send_and_wait(std::string payload);

  // Sends a request to the client and waits for its reply, at most `timeout`.
  asio::awaitable<call_outcome> call(std::string_view method, const nlohmann::json& params,
                                     std::chrono::milliseconds timeout);

  std::uint64_t id() const noexcept { return id_; }
  bool is_open() const noexcept { return open_; }
  // False once the client stopped sending (EOF) or the daemon stopped reading (shutdown).
  bool is_reading() const noexcept { return open_ && !draining_; }
  // The parent this connection is the endpoint of, if it registered as one.
  const std::optional<std::string>& parent_id() const noexcept { return parent_id_; }
  void set_parent_id(std::string parent) { parent_id_ = std::move(parent); }
  std::size_t requests_in_flight() const noexcept { return requests_in_flight_; }

  // $/cancelRequest: a request still waiting (a subagent/wait asleep until its children
  // settle) registers what ends it, under its id, for as long as the registration lives;
  // cancel(id) runs it once, if it is still registered. A cancel of a request in flight that
  // has not registered yet (read in the same chunk as it, say) is kept until the request
  // registers (then it runs at once) or ends. Otherwise (answered already, never asked, a
  // notification) cancel is a no-op. I/O thread only.
  class cancel_registration {
   public:
    cancel_registration() = default;
    cancel_registration(std::weak_ptr<connection> conn, std::string key, std::uint64_t token)
        : conn_(std::move(conn)), key_(std::move(key)), token_(token) {}
    cancel_registration(cancel_registration&& other) noexcept { *this = std::move(other); }
    cancel_registration& operator=(cancel_registration&& other) noexcept;
    cancel_registration(const cancel_registration&) = delete;
    cancel_registration& operator=(const cancel_registration&) = delete;
    ~cancel_registration() { release(); }

   private:
    void release() noexcept;
    std::weak_ptr<connection> conn_;
    std::string key_;
    std::uint64_t token_ = 0;
  };
  [[nodiscard]] cancel_registration on_cancel(const nlohmann::json& request_id, std::function<void()> cancel);
  void cancel(const nlohmann::json& request_id);

 private:
  struct outgoing {
    std::string bytes;
    std::function<void(bool)> on_written;
  };
  struct pending_call {
    asio::steady_timer timer;
    std::optional<call_outcome> outcome;
  };

  asio::awaitable<void> read_loop();
  asio::awaitable<void> write_loop();
  asio::awaitable<void> watchdog();
  void handle_frame(rpc::decoded_frame frame);
  asio::awaitable<void> serve(rpc::message msg, std::string id_key);
  void handle_response(const rpc::message& msg);
  void finish_calls(call_outcome::kind how, std::string_view why);
  void close_if_drained();
  // Writes as much of `bytes` as the socket takes now without blocking; returns how much, or
  // nullopt after closing the connection on a write error.
  std::optional<std::size_t> write_now(std::string_view bytes);

  socket_type socket_;
  const config& cfg_;
  message_sink& sink_;
  std::uint64_t id_;
  rpc::frame_decoder decoder_;
  std::deque<outgoing> outbox_;
  std::size_t outbox_bytes_ = 0;
  asio::steady_timer wake_writer_;
  asio::steady_timer watchdog_timer_;
  std::chrono::steady_clock::time_point partial_since_{};
  bool open_ = true;
  bool draining_ = false;  // no more reading: close once replies in flight are written
  std::optional<std::string> parent_id_;
  std::int64_t next_call_id_ = 1;
  std::unordered_map<std::int64_t, pending_call*> calls_;
  std::size_t requests_in_flight_ = 0;
  // Requests in flight (serve()) by id, as its JSON text: what $/cancelRequest can reach.
  struct cancellable {
    std::size_t count = 0;         // requests with this id in flight
    bool cancelled = false;        // cancelled before anything registered
    std::uint64_t token = 0;       // the registration's (0: none)
    std::function<void()> cancel;  // what ends the newest registered one
  };
  std::unordered_map<std::string, cancellable> cancellable_;
  std::uint64_t next_cancel_token_ = 1;
};

}  // namespace handoff::daemon
