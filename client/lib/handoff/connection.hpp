// One connection to handoffd: synchronous calls with typed params and results
// (protocol/messages.hpp), and handlers for the requests the daemon sends back. It speaks
// newline-delimited JSON; client.hpp shows it in use.
//
// Every failure is a client_error (client_error.hpp), except one: params holding a string that
// is not valid UTF-8 throw std::invalid_argument before anything is sent (JSON cannot carry
// such bytes, and the library does not alter a final text behind its caller's back).
//
// Not thread-safe: use a connection from one thread at a time (or one connection per thread).
//
// Requests from the daemon (context/usage, parent/deliver; see parent_endpoint.hpp) may arrive
// at any time, also while a call waits for its own reply. They are handled as they arrive, on
// the calling thread, inside whichever call is reading then (or in serve_one()): answering
// context/usage promptly matters, because the daemon waits only about 2 s for it. A handler
// may itself make calls on the connection.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "handoff/cancel_signal.hpp"
#include "handoff/client_error.hpp"
#include "handoff/daemon_start.hpp"
#include "handoff/unix_stream.hpp"
#include "protocol/framing.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/messages.hpp"
#include "protocol/methods.hpp"

namespace handoff::client {

using std::chrono::milliseconds;

// The socket handoffd listens on unless told otherwise: $HANDOFF_SOCKET when set, else
// $XDG_RUNTIME_DIR/handoff/handoffd.sock, else the private ${TMPDIR:-/tmp}/handoff-<uid>/handoffd.sock
// (rpc::client_socket_location, protocol/socket_location.hpp). The last one's directory is made
// (0700) or checked first: client_error{refused}, naming it and what is wrong, when it is a
// symlink, not a directory, another user's or open to others.
std::filesystem::path default_socket_path();

struct options {
  std::filesystem::path socket;            // empty: default_socket_path()
  milliseconds call_timeout{30'000};       // how long a call waits for its reply; subagent/wait
                                           // waits its timeoutMs plus this, or for ever without one
  std::size_t max_frame_bytes = 64 << 20;  // largest message accepted from the daemon, bytes
  milliseconds cancel_grace{5'000};        // how long a cancelled call reads on for the daemon's
                                           // answer to $/cancelRequest (timeout after it)
  std::optional<autostart> start;          // set: start handoffd when nothing answers (daemon_start.hpp)
};

// Answers one daemon -> client request: returns the result, or throws. An rpc::rpc_error is
// sent back with its code; any other exception as internal_error with its what().
using request_handler = std::function<nlohmann::json(const nlohmann::json& params)>;

// A string member a call writes into its params object from the caller's own bytes.
struct text_member {
  std::string_view key;    // "finalText"
  std::string_view value;  // must be valid UTF-8 (else the call throws, nothing sent)
};

class connection {
 public:
  // Connects (no message is sent yet). Throws client_error: daemon_absent, refused, io.
  explicit connection(options opts = {});
  connection(connection&&) noexcept = default;
  connection& operator=(connection&&) noexcept = default;

  // ---- docs/protocol.md §6, client -> daemon ----
  // Checks that the daemon speaks our protocol version (protocol error otherwise). With a
  // parentId the connection becomes that parent's endpoint: use parent_endpoint for that.
  rpc::initialize_result initialize(const rpc::initialize_params& params = {});
  rpc::started_result started(const rpc::started_params& params);
  // A notification: the daemon does not answer, so a rejected one is not reported.
  void progress(const rpc::progress_params& params);
  // Durable once this returns.
  rpc::completed_result completed(const rpc::completed_params& params);
  rpc::check_result check(const rpc::check_params& params);
  rpc::wait_result wait(const rpc::wait_params& params);
  // The same, stopped early when `cancel` is raised (a Ctrl-C): the daemon is asked to cancel
  // the wait, and its answer decides. Still asleep, the wait takes nothing and this throws
  // client_error with code rpc::errc::request_cancelled: the results stay queued. Answered
  // already, the batch is returned as usual (check cancel.raised()): those results were
  // consumed, so they are handed over, not dropped with the connection.
  rpc::wait_result wait(const rpc::wait_params& params, const cancel_signal& cancel);
  rpc::cancel_result cancel(const rpc::cancel_params& params);
  // A notification ("busy" | "idle"); idle lets the daemon auto-deliver to the endpoint.
  void parent_state(const rpc::parent_state_params& params);
  rpc::artifact_read_result read_artifact(const rpc::artifact_read_params& params);
  // daemon/status: what the daemon holds (protocol/daemon_messages.hpp; rpc::encode gives the
  // JSON back, as `handoff status --json` prints it).
  rpc::status_result daemon_status();

  // ---- any method of protocol/methods.hpp ----
  // A request, its params encoded and its result decoded by their descriptions. Throws
  // client_error as call() does, and protocol when the result does not decode.
  template <class Params, class Result>
  Result request(const rpc::request_type<Params, Result>& method, const Params& params,
                 std::optional<milliseconds> timeout) {
    return typed_call<Result>(method.name, rpc::encode(params), std::nullopt, timeout);
  }
  template <class Params, class Result>
  Result request(const rpc::request_type<Params, Result>& method, const Params& params) {
    return request(method, params, options_.call_timeout);
  }
  template <class Params>
  void notify(const rpc::notification_type<Params>& method, const Params& params) {
    notify(method.name, rpc::encode(params));
  }
  // A result decoded as `Result`; one that does not decode is the daemon's fault: protocol error.
  template <class Result>
  static Result decoded(std::string_view method, const nlohmann::json& result) {
    try {
      return rpc::result_decoder<Result>::decode(result);
    } catch (const rpc::rpc_error& e) {
      throw client_error(error_kind::protocol,
                         "handoffd's answer to " + std::string(method) + " is malformed: " + e.what());
    }
  }

  // ---- untyped access ----
  // Sends a request and returns its result. Throws client_error: rpc for an error reply,
  // timeout when none came within `timeout` (nullopt: wait for ever), refused when the daemon
  // closed the connection, protocol for a malformed message.
  nlohmann::json call(std::string_view method, const nlohmann::json& params, std::optional<milliseconds> timeout);
  nlohmann::json call(std::string_view method, const nlohmann::json& params) {
    return call(method, params, options_.call_timeout);
  }
  void notify(std::string_view method, const nlohmann::json& params);

  // ---- daemon -> client requests ----
  // Installs (or, with an empty handler, removes) the handler of `method`. Requests without a
  // handler are answered with method_not_found.
  void on_request(const std::string& method, request_handler handler);
  // Waits up to `timeout` (nullopt: for ever) for daemon requests and handles them. True once
  // one was handled, false when the timeout passed with none. Throws refused when the daemon
  // closed the connection.
  bool serve_one(std::optional<milliseconds> timeout);

  const std::filesystem::path& socket_path() const noexcept { return stream_.path(); }
  const options& settings() const noexcept { return options_; }

 private:
  // The next message from the daemon, or nullopt at the deadline (or once `wake_fd`, when not
  // -1, is readable).
  // `just_sent`: a request went out a moment ago, so the first read waits before it tries.
  std::optional<rpc::message> next_message(deadline until, int wake_fd = -1, bool just_sent = false);
  // A response is filed for its call (or dropped if nobody waits for it any more); a request
  // is answered; a notification is ignored (the daemon sends none today).
  void handle(rpc::message message);
  void answer(const rpc::message& request);
  void send(const std::string& payload);
  void write_frame(std::string_view payload, deadline until);
  void write_text_frame(std::string_view head, std::string_view text, deadline until);
  [[noreturn]] void connection_closed(std::string_view during) const;
  // Handles what the daemon sent before it closed the connection; throws its error, if any.
  void read_last_words();
  // Reads a frame straight into a call's Result when it is that call's reply (rpc::read_response):
  // true when it did.
  using reply_reader = std::function<bool(std::string_view frame, std::int64_t id)>;
  // The next complete frame from the daemon, or nullopt as next_message.
  std::optional<rpc::decoded_frame> next_frame(deadline until, int wake_fd, bool just_sent);
  // A frame as a message; throws protocol for a malformed one.
  static rpc::message parsed(const rpc::decoded_frame& frame);
  // call_with_text() whose result is decoded as `Result`: straight from the reply's bytes when
  // rpc::read_response takes them, else through the json as decoded() does.
  template <class Result>
  Result typed_call(std::string_view method, const nlohmann::json& params, const std::optional<text_member>& text,
                    std::optional<milliseconds> timeout, const cancel_signal* cancel = nullptr) {
    if constexpr (rpc::wire::described<Result>) {
      std::optional<Result> fast;
      const reply_reader read = [&fast](std::string_view frame, std::int64_t id) {
        fast = rpc::read_response<Result>(frame, id);
        return fast.has_value();
      };
      nlohmann::json result = call_with_text(method, params, text, timeout, cancel, &read);
      if (fast) return std::move(*fast);
      return decoded<Result>(method, result);
    } else {
      return decoded<Result>(method, call_with_text(method, params, text, timeout, cancel));
    }
  }
  // call(), with `text` written as one more member of the params object (an object) straight
  // from the caller's string: completed() sends a final text without copying it into a json.
  // A raised `cancel` sends $/cancelRequest for the call once and allows cancel_grace more.
  nlohmann::json call_with_text(std::string_view method, const nlohmann::json& params,
                                const std::optional<text_member>& text, std::optional<milliseconds> timeout,
                                const cancel_signal* cancel = nullptr, const reply_reader* fast = nullptr);

  options options_;
  unix_stream stream_;
  rpc::frame_decoder decoder_;
  std::int64_t next_id_ = 1;
  std::set<std::int64_t> awaiting_;                // ids of calls in progress (nested by handlers)
  std::map<std::int64_t, rpc::message> replies_;   // replies read for a call not yet resumed
  std::map<std::string, request_handler, std::less<>> handlers_;
  std::size_t handled_ = 0;                        // daemon requests answered so far
  std::string request_;                            // the request being sent; its memory reused
  std::string piece_;                              // a long text's piece being sent; reused too
};

}  // namespace handoff::client
