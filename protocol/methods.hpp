// Every method of docs/protocol.md §6-7, described once: its name, its params and result types,
// and which way it goes (as vscode-jsonrpc's RequestType and clangd's LSPBinder do). The
// daemon's method table binds these (daemon/service/service.cpp), the daemon's calls to a
// parent's endpoint name them (daemon/service/), and the C++ client calls them
// (client/lib/handoff/connection.hpp: `request(methods::subagent_check, params)` returns a
// check_result). client/pi/src/methods.ts is the TypeScript table; methods_description()
// lists this one for the test that keeps the two alike.
#pragma once

#include <optional>
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

// Every method with its direction, kind and the fields of its params and result
// (wire::fields_of), as JSON: what client/pi's test compares its own table against.
nlohmann::json methods_description();

}  // namespace handoff::rpc
