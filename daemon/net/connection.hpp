// One client connection's session, in two directions. The requests the client sends: each read
// from a frame its transport reads, handed to the method table once, and answered at once or in
// a coroutine of its own (at most 128 in flight, each reachable by $/cancelRequest). The calls
// the daemon makes to the client (context/usage, parent/deliver): each matched to its reply.
// The bytes (framing, the outbox, the slow-frame watchdog) are its transport's (transport.hpp).
//
// Everything here runs on the single I/O thread; no locks. The transport's coroutines and each
// request's hold a shared_ptr to the connection, so it lives as long as any of them runs.
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
#include <variant>

#include <asio/awaitable.hpp>
#include <asio/local/stream_protocol.hpp>
#include <asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "protocol/framing.hpp"
#include "protocol/incoming.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/methods.hpp"
#include "net/transport.hpp"

namespace handoff::daemon {

struct config;
class connection;

// What the connection hands upward: requests and notifications (read, not decoded), and its end.
class message_sink {
 public:
  virtual ~message_sink() = default;
  // One request or notification, routed once by its method: nullopt when it was answered at
  // once on the I/O thread (its reply or its error sent; none for a notification), else the
  // coroutine that answers it, which the connection runs as one of its requests in flight.
  // `in` (and the frame it reads) lasts only for this call.
  virtual std::optional<asio::awaitable<void>> on_request(const std::shared_ptr<connection>& conn,
                                                         rpc::incoming& in) = 0;
  virtual void on_closed(const std::shared_ptr<connection>& conn) = 0;
  // The client shut down its sending side; replies can still be written.
  virtual void on_input_closed(const std::shared_ptr<connection>& conn) = 0;
};

// Why a daemon -> client call has no result.
struct call_error {
  enum class kind {
    timeout,      // no reply in time
    closed,       // the connection closed first
    error_reply,  // the client answered with an error
    bad_result,   // the client's result does not decode as the method's Result
  };
  kind how = kind::closed;
  std::string message;  // plain words: what the client said, or what is wrong
};

// A daemon -> client call's outcome: the method's Result, or why there is none.
template <class R>
class call_outcome {
 public:
  call_outcome(R result) : v_(std::in_place_index<0>, std::move(result)) {}
  call_outcome(call_error error) : v_(std::in_place_index<1>, std::move(error)) {}
  bool ok() const noexcept { return v_.index() == 0; }
  R& result() { return std::get<0>(v_); }
  const call_error& error() const { return std::get<1>(v_); }

 private:
  std::variant<R, call_error> v_;
};

// Params already encoded as JSON text (a delivery's, kept as it is sent), put in as they are.
// The text must outlive the call: a local of the awaiting coroutine.
struct encoded_params {
  std::string_view text;
};

class connection : public std::enable_shared_from_this<connection>, private frame_sink {
 public:
  using socket_type = transport::socket_type;

  connection(socket_type socket, const config& cfg, message_sink& sink, std::uint64_t id);
  ~connection();

  // Starts the transport: its reader, writer and frame watchdog.
  void start();
  // Closes at once: pending writes are dropped (their callbacks get false), calls end as closed.
  void close(std::string_view why);
  // Stops reading; closes once the outbox has drained (graceful shutdown).
  void close_after_drain();

  // Sends one JSON text (transport::send: written at once when the outbox is empty, bounded).
  void send(std::string payload, std::function<void(bool)> on_written = {});
  // Same, resuming when the bytes were written (true) or the connection closed (false).
  asio::awaitable<bool> send_and_wait(std::string payload);

  // Sends a daemon -> client request (protocol/methods.hpp) and waits for its reply, at most
  // `timeout`: its result decoded by the method's description, or why there is none. `params`,
  // like encoded_params' text, is read once the call runs: a named local of the awaiting
  // coroutine, not a temporary.
  template <class Params, class Result>
  asio::awaitable<call_outcome<Result>> call(const rpc::request_type<Params, Result, rpc::direction::to_client>& method,
                                             const Params& params, std::chrono::milliseconds timeout) {
    const std::string text = rpc::encode_params_text(params);
    co_return co_await call(method, encoded_params{text}, timeout);
  }
  template <class Params, class Result>
  asio::awaitable<call_outcome<Result>> call(const rpc::request_type<Params, Result, rpc::direction::to_client>& method,
                                             encoded_params params, std::chrono::milliseconds timeout) {
    call_outcome<nlohmann::json> reply = co_await call_text(method.name, params.text, timeout);
    if (!reply.ok()) co_return reply.error();
    std::optional<call_error> undecodable;
    try {
      co_return rpc::result_decoder<Result>::decode(reply.result());
    } catch (const rpc::rpc_error& e) {
      undecodable = call_error{call_error::kind::bad_result, e.what()};
    }
    co_return std::move(*undecodable);
  }

  std::uint64_t id() const noexcept { return id_; }
  bool is_open() const noexcept { return transport_.is_open(); }
  // False once the client stopped sending (EOF) or the daemon stopped reading (shutdown).
  bool is_reading() const noexcept { return transport_.is_reading(); }
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
  struct pending_call {
    asio::steady_timer timer;
    std::optional<call_outcome<nlohmann::json>> outcome;
  };

  // call() with the method's name and its params' text: the reply's result as JSON.
  asio::awaitable<call_outcome<nlohmann::json>> call_text(std::string_view method, std::string_view params,
                                                          std::chrono::milliseconds timeout);

  // frame_sink: what the transport hands up.
  void on_frame(rpc::decoded_frame frame) override;
  void on_stream_error(rpc::errc code, const std::string& message) override;
  void on_input_closed() override;
  void on_closed() override;
  bool busy() const override;

  void dispatch(rpc::incoming& in);
  asio::awaitable<void> serve(asio::awaitable<void> answering, std::string id_key);
  void handle_response(const rpc::message& msg);
  void finish_calls(call_error::kind how, std::string_view why);

  transport transport_;
  const config& cfg_;
  message_sink& sink_;
  std::uint64_t id_;
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
