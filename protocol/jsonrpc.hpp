// JSON-RPC 2.0 messages: classification of one decoded frame, error codes, and builders.
// No sockets here: bytes in, values out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

using json = nlohmann::json;

// Error codes. -32700..-32603 are JSON-RPC's own; -32000..-32099 are handoff's (docs/protocol.md).
enum class errc : int {
  parse_error = -32700,       // not JSON, invalid UTF-8, nested too deep
  invalid_request = -32600,   // JSON, but not a JSON-RPC 2.0 request/notification/response
  method_not_found = -32601,
  invalid_params = -32602,    // a field missing, of the wrong type or out of range (named)
  internal_error = -32603,    // a bug or an unexpected failure; logged once
  unknown_parent = -32001,    // no such parent known to the daemon
  unknown_child = -32002,     // no such child under that parent
  frame_too_large = -32003,   // a frame over the configured cap (it was skipped)
  too_many_connections = -32004,  // the connection cap was reached; the connection closes
  storage_failed = -32005,    // the durable queue could not persist it: NOT acknowledged
  conflict = -32006,          // the child already completed with a different final text
  not_found = -32007,         // artifact/read: no artifact with that sha256
  shutting_down = -32008,     // the daemon is stopping; retry after it restarts
  request_timeout = -32009,   // a daemon -> client request got no reply in time
  overloaded = -32010,        // a per-connection or global limit refused the request
  request_cancelled = -32800, // the client cancelled it ($/cancelRequest) before it was answered
};

// Every code above by name, as tests/support/wire_description prints them for the TypeScript
// mirror's test (client/pi/test/wire-description.test.ts). A code added above goes here too.
struct errc_entry {
  errc code;
  std::string_view name;
};
inline constexpr errc_entry errc_names[] = {
    {errc::parse_error, "parse_error"},
    {errc::invalid_request, "invalid_request"},
    {errc::method_not_found, "method_not_found"},
    {errc::invalid_params, "invalid_params"},
    {errc::internal_error, "internal_error"},
    {errc::unknown_parent, "unknown_parent"},
    {errc::unknown_child, "unknown_child"},
    {errc::frame_too_large, "frame_too_large"},
    {errc::too_many_connections, "too_many_connections"},
    {errc::storage_failed, "storage_failed"},
    {errc::conflict, "conflict"},
    {errc::not_found, "not_found"},
    {errc::shutting_down, "shutting_down"},
    {errc::request_timeout, "request_timeout"},
    {errc::overloaded, "overloaded"},
    {errc::request_cancelled, "request_cancelled"},
};

// The one exception type handlers throw; the dispatcher turns it into an error response.
struct rpc_error : std::runtime_error {
  errc code;
  json data;  // optional structured detail (null when none)
  rpc_error(errc c, const std::string& message, json d = nullptr)
      : std::runtime_error(message), code(c), data(std::move(d)) {}
};

struct parse_limits {
  std::size_t max_depth = 64;  // nesting of arrays/objects; the message object is level 1
};

// One decoded message.
struct message {
  enum class kind { request, notification, response };
  kind type = kind::request;
  json id;                 // string or integer; null for notifications (and for a request
                           // or response that carried "id": null, which JSON-RPC allows)
  std::string method;      // request/notification
  json params;             // request/notification: object, array or null when absent
  json result;             // response: the result (null when error is set)
  std::optional<json> error;  // response: the error object {code, message, data?}
};

// Parses one frame. On failure throws rpc_error: parse_error for what parse_json refuses (its
// json_parse_error, mapped here and nowhere else), invalid_request for JSON that is not a
// JSON-RPC 2.0 message. When the frame was a JSON object with a usable "id", the error's data
// holds {"id": <id>} so the reply can carry it (JSON-RPC says: id null when it could not be
// determined).
message parse_message(std::string_view frame, const parse_limits& limits = {});

// A request in the form clients write it, {"jsonrpc":"2.0","id":<integer>,"method":"<name>"}
// with ,"params":<value> last or without, read without building a json: views into the frame.
struct request_text {
  std::int64_t id = 0;
  std::string_view method;  // without escapes (json_reader.hpp)
  std::string_view params;  // the params' JSON text, not checked yet; empty when there are none
};
// nullopt for any other form, which parse_message decides.
std::optional<request_text> read_request_text(std::string_view frame);

// Serialized messages (one line of compact JSON, no newline). Invalid UTF-8 inside values is
// replaced (U+FFFD) rather than throwing; our own strings are validated before they get here.
std::string make_response(const json& id, const json& result);
// The same with the result already JSON text (wire::append_object wrote it), put in as it is.
std::string make_encoded_response(const json& id, std::string_view result);
std::string make_error(const json& id, errc code, std::string_view message,
                       const json& data = nullptr);
std::string make_request(const json& id, std::string_view method, const json& params);
// The same with the params already JSON text (an object or an array), put in as it is.
std::string make_encoded_request(const json& id, std::string_view method, std::string_view params);
std::string make_notification(std::string_view method, const json& params);

// The standard message for a code ("Parse error", "Invalid params", ...).
std::string_view default_message(errc code) noexcept;

}  // namespace handoff::rpc
