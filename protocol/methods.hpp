// Every method of docs/protocol.md §6-7, described once: its name, its params and result types,
// and which way it goes (as vscode-jsonrpc's RequestType and clangd's LSPBinder do). The
// daemon's method table binds these (daemon/service/service.cpp), the daemon's calls to a
// parent's endpoint name them (daemon/service/), and the C++ client calls them
// (client/lib/handoff/connection.hpp: `request(methods::subagent_check, params)` returns a
// check_result). client/pi/src/methods.ts is the TypeScript table; methods_description()
// lists this one for the test that keeps the two alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <nlohmann/json.hpp>

#include "protocol/daemon_messages.hpp"
#include "protocol/messages.hpp"

namespace handoff::rpc {

// Which way a method goes: client -> daemon, or daemon -> a parent's endpoint.
enum class direction { to_daemon, to_client };

// A request: exactly one reply, a Result or an error.
template <class Params, class Result, direction Dir = direction::to_daemon>
struct request_type {
  using params_type = Params;
  using result_type = Result;
  static constexpr direction dir = Dir;
  std::string_view name;
};

// A notification: no reply.
template <class Params, direction Dir = direction::to_daemon>
struct notification_type {
  using params_type = Params;
  static constexpr direction dir = Dir;
  std::string_view name;
};

namespace methods {

// ---- client -> daemon ----------------------------------------------------------------------
inline constexpr request_type<initialize_params, initialize_result> initialize{"initialize"};
inline constexpr request_type<started_params, started_result> subagent_started{"subagent/started"};
inline constexpr notification_type<progress_params> subagent_progress{"subagent/progress"};
inline constexpr request_type<completed_params, completed_result> subagent_completed{"subagent/completed"};
inline constexpr request_type<check_params, check_result> subagent_check{"subagent/check"};
inline constexpr request_type<wait_params, wait_result> subagent_wait{"subagent/wait"};
inline constexpr request_type<cancel_params, cancel_result> subagent_cancel{"subagent/cancel"};
inline constexpr notification_type<parent_state_params> parent_state{"parent/state"};
// Gives up a request of the same connection (only a subagent/wait still asleep), as in LSP.
inline constexpr notification_type<cancel_request_params> cancel_request{"$/cancelRequest"};
inline constexpr request_type<artifact_read_params, artifact_read_result> artifact_read{"artifact/read"};
inline constexpr request_type<status_params, status_result> daemon_status{"daemon/status"};
inline constexpr request_type<gc_params, gc_result> daemon_gc{"daemon/gc"};

// ---- daemon -> a parent's endpoint ---------------------------------------------------------
// The parent's usage, or null when unknown.
inline constexpr request_type<usage_request_params, std::optional<usage_dto>, direction::to_client> context_usage{
    "context/usage"};
inline constexpr request_type<deliver_params, deliver_result, direction::to_client> parent_deliver{"parent/deliver"};

// All of them, for descriptions and for tests that go through every method.
inline constexpr auto all = std::tuple{initialize,      subagent_started, subagent_progress, subagent_completed,
                                       subagent_check,  subagent_wait,    subagent_cancel,   parent_state,
                                       cancel_request,  artifact_read,    daemon_status,     daemon_gc,
                                       context_usage,   parent_deliver};

}  // namespace methods

// A method's result on the wire: a wire struct, or null for an empty std::optional.
template <wire::described T>
nlohmann::json encode_result(const T& v) {
  return encode(v);
}
template <wire::described T>
nlohmann::json encode_result(const std::optional<T>& v) {
  return v ? encode(*v) : nlohmann::json();
}
// The same as JSON text (wire::append_object: no json built on the way), for the daemon's replies.
template <wire::described T>
std::string encode_result_text(const T& v) {
  std::string out;
  out.reserve(512);  // most replies fit (a daemon/status is about 400 bytes): no regrowth
  wire::append_object(v, out);
  return out;
}
template <wire::described T>
std::string encode_result_text(const std::optional<T>& v) {
  return v ? encode_result_text(*v) : std::string("null");
}

// A method's params as JSON text (wire::append_object, members in the shape's order): what the
// daemon sends in its calls to a client, and keeps of a delivery to send it again unchanged.
template <wire::described T>
std::string encode_params_text(const T& v) {
  std::string out;
  wire::append_object(v, out);
  return out;
}

// A method's result as a client receives it (throws rpc_error{invalid_params} naming the field).
template <class R>
struct result_decoder {
  static R decode(const nlohmann::json& j) { return decode_result<R>(j); }
};
template <class R>
struct result_decoder<std::optional<R>> {
  static std::optional<R> decode(const nlohmann::json& j) {
    if (j.is_null()) return std::nullopt;
    return decode_result<R>(j);
  }
};

// A reply to request `id` read straight into its Result, with no json built, when the frame is
// exactly as handoffd writes one: {"jsonrpc":"2.0","id":<id>,"result":<the Result>}, the Result in
// a form wire::read_text_object takes. nullopt for anything else (another id, an error, an unusual
// but valid form, invalid JSON): the caller parses the frame as any message (parse_message, then
// decode_result), which accepts it alike or says what is wrong with it.
template <wire::described R>
std::optional<R> read_response(std::string_view frame, std::int64_t id) {
  json_reader r(frame);
  std::int64_t got = 0;
  R out{};
  if (r.take_exact(R"({"jsonrpc":"2.0","id":)") && r.integer(got) && got == id && r.take_exact(R"(,"result":)") &&
      wire::read_text_object(r, out, wire::context{wire::default_limits()}) && r.take('}') && r.at_end())
    return out;
  return std::nullopt;
}

// A request's params read straight from their text (request_text::params) into `out`: false when
// the typed reader declines them, and decode_params on the parsed message decides instead.
template <wire::described T>
bool read_params_text(std::string_view params, const wire_limits& lim, T& out) {
  if constexpr (requires { wire::shape<T>::params_ignored; }) {
    return params.empty();  // any params are ignored, but the slow path checks they are JSON
  } else {
    if (params.empty()) return requires { wire::shape<T>::params_may_be_null; };
    json_reader r(params);
    return wire::read_text_object(r, out, wire::context{lim}) && r.at_end();
  }
}

// Every method with its direction, kind and the fields of its params and result
// (wire::fields_of), as JSON: what client/pi's test compares its own table against.
nlohmann::json methods_description();

}  // namespace handoff::rpc
