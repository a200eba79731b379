// JSON-RPC 2.0 (https://www.jsonrpc.org/specification): one frame -> one classified message,
// and the four kinds of message we write. Batches (arrays) are refused: no handoff method needs
// them and they would multiply the work one frame can cause.
#include "protocol/jsonrpc.hpp"

#include <string>
#include <utility>

#include "protocol/json_dump.hpp"
#include "protocol/json_parse.hpp"
#include "protocol/json_reader.hpp"

namespace handoff::rpc {
namespace {

// JSON-RPC ids are strings, numbers or null; handoff refuses fractional ids (the spec advises
// against them, and they do not round-trip through every client's number type).
bool valid_id(const json& id) noexcept {
  return id.is_string() || id.is_number_integer() || id.is_null();
}

bool valid_error_object(const json& e) {
  if (!e.is_object()) return false;
  const auto code = e.find("code");
  const auto text = e.find("message");
  return code != e.end() && code->is_number_integer() && text != e.end() && text->is_string();
}

// Values and strings we send: invalid UTF-8 becomes U+FFFD instead of throwing (json_dump.hpp).
void append(std::string& out, const json& value) { append_json_replacing(out, value); }
void append_quoted(std::string& out, std::string_view text) { append_json_string_replacing(out, text); }

// The one place a parser error becomes JSON-RPC's -32700.
json parse_document(std::string_view frame, std::size_t max_depth) {
  try {
    return parse_json(frame, max_depth);
  } catch (const json_parse_error& e) {
    throw rpc_error(errc::parse_error, e.what());
  }
}

}  // namespace

message parse_message(std::string_view frame, const parse_limits& limits) {
  json doc = parse_document(frame, limits.max_depth);
  if (doc.is_array()) throw rpc_error(errc::invalid_request, "batch requests are not supported");
  if (!doc.is_object()) throw rpc_error(errc::invalid_request, "a message must be a JSON object");

  // The id first, so that every later complaint can be answered to it.
  const auto id = doc.find("id");
  const bool has_id = id != doc.end();
  if (has_id && !valid_id(*id))
    throw rpc_error(errc::invalid_request, "id: expected a string, an integer or null");
  // Built only for a complaint: most messages are fine, and this json costs two allocations.
  auto invalid = [&](const std::string& why) {
    return rpc_error(errc::invalid_request, why, has_id && !id->is_null() ? json{{"id", *id}} : json());
  };

  const auto version = doc.find("jsonrpc");
  if (version == doc.end() || !version->is_string() ||
      version->get_ref<const std::string&>() != "2.0")
    throw invalid("jsonrpc: expected \"2.0\"");

  const auto result = doc.find("result");
  const auto error = doc.find("error");
  message m;
  if (const auto method = doc.find("method"); method != doc.end()) {
    if (!method->is_string()) throw invalid("method: expected a string");
    if (result != doc.end() || error != doc.end())
      throw invalid("a request carries no result or error");
    m.type = has_id ? message::kind::request : message::kind::notification;
    m.id = has_id ? *id : json();
    m.method = std::move(method->get_ref<std::string&>());
    // JSON-RPC wants params structured when present; "params": null, which some clients send
    // for "no params", is taken as absent.
    if (const auto params = doc.find("params"); params != doc.end() && !params->is_null()) {
      if (!params->is_object() && !params->is_array())
        throw invalid("params: expected an object or an array");
      m.params = std::move(*params);
    }
    return m;
  }

  if (result == doc.end() && error == doc.end())
    throw invalid("expected \"method\" (a request) or \"result\" or \"error\" (a response)");
  if (result != doc.end() && error != doc.end())
    throw invalid("a response carries result or error, not both");
  if (!has_id) throw invalid("id: a response needs one");
  m.type = message::kind::response;
  m.id = *id;
  if (result != doc.end()) {
    m.result = std::move(*result);
  } else {
    if (!valid_error_object(*error))
      throw invalid("error: expected {\"code\": integer, \"message\": string}");
    m.error = std::move(*error);
  }
  return m;
}

std::optional<request_text> read_request_text(std::string_view frame) {
  while (!frame.empty() && (frame.back() == ' ' || frame.back() == '\n' || frame.back() == '\r' || frame.back() == '\t'))
    frame.remove_suffix(1);
  if (frame.empty() || frame.back() != '}') return std::nullopt;
  json_reader r(frame.substr(0, frame.size() - 1));  // up to the message's closing brace
  request_text req;
  if (!r.take_exact(R"({"jsonrpc":"2.0","id":)") || !r.integer(req.id) || !r.take_exact(R"(,"method":)") ||
      !r.string(req.method))
    return std::nullopt;
  if (r.at_end()) return req;
  // "params": with no value is not JSON (and empty params would read as none).
  if (!r.take_exact(R"(,"params":)") || r.at_end()) return std::nullopt;
  req.params = r.rest();
  return req;
}

namespace {

// `{"jsonrpc":"2.0","id":ID`, how a response and a request begin; with room for `more` bytes
// besides the envelope, an id and the frame's newline when the rest is known to be large.
std::string begin_with_id(const json& id, std::size_t more = 0) {
  std::string out;
  if (more != 0) out.reserve(more + 64);
  out = R"({"jsonrpc":"2.0","id":)";
  append(out, id);
  return out;
}

// `member` (`,"data":`) and the value, or nothing when the value is null.
void append_unless_null(std::string& out, std::string_view member, const json& value) {
  if (value.is_null()) return;
  out += member;
  append(out, value);
}

}  // namespace

std::string make_response(const json& id, const json& result) {
  std::string out = begin_with_id(id);
  out += R"(,"result":)";
  append(out, result);
  out += '}';
  return out;
}

std::string make_encoded_response(const json& id, std::string_view result) {
  std::string out = begin_with_id(id, result.size());
  out += R"(,"result":)";
  out += result;
  out += '}';
  return out;
}

std::string make_error(const json& id, errc code, std::string_view message, const json& data) {
  std::string out = begin_with_id(id);
  out += R"(,"error":{"code":)";
  out += std::to_string(static_cast<int>(code));
  out += R"(,"message":)";
  append_quoted(out, message);
  append_unless_null(out, R"(,"data":)", data);
  out += "}}";
  return out;
}

// JSON-RPC: params "MAY be omitted" and, when present, must be an object or an array, so null
// params are left out.
std::string make_request(const json& id, std::string_view method, const json& params) {
  std::string out = begin_with_id(id);
  out += R"(,"method":)";
  append_quoted(out, method);
  append_unless_null(out, R"(,"params":)", params);
  out += '}';
  return out;
}

std::string make_encoded_request(const json& id, std::string_view method, std::string_view params) {
  std::string out = begin_with_id(id, params.size() + method.size());
  out += R"(,"method":)";
  append_quoted(out, method);
  out += R"(,"params":)";
  out += params;
  out += '}';
  return out;
}

std::string make_notification(std::string_view method, const json& params) {
  std::string out = R"({"jsonrpc":"2.0","method":)";
  append_quoted(out, method);
  append_unless_null(out, R"(,"params":)", params);
  out += '}';
  return out;
}

std::string_view default_message(errc code) noexcept {
  switch (code) {
    case errc::parse_error:
      return "Parse error";
    case errc::invalid_request:
      return "Invalid Request";
    case errc::method_not_found:
      return "Method not found";
    case errc::invalid_params:
      return "Invalid params";
    case errc::internal_error:
      return "Internal error";
    case errc::unknown_parent:
      return "Unknown parent";
    case errc::unknown_child:
      return "Unknown child";
    case errc::frame_too_large:
      return "Frame too large";
    case errc::too_many_connections:
      return "Too many connections";
    case errc::storage_failed:
      return "Storage failed";
    case errc::conflict:
      return "Conflict";
    case errc::not_found:
      return "Not found";
    case errc::shutting_down:
      return "Shutting down";
    case errc::request_timeout:
      return "Request timeout";
    case errc::overloaded:
      return "Overloaded";
    case errc::request_cancelled:
      return "Request cancelled";
  }
  return "Server error";
}

}  // namespace handoff::rpc
