// The typed calls: encode the params with protocol/'s encoders, decode the result with its
// client-side decoders. A result that does not decode is the daemon's fault: protocol error.
#include <string>

#include "handoff/connection.hpp"

namespace handoff::client {
namespace {

// Runs a protocol decoder on a result, turning its complaint into a protocol error.
template <class Decode>
auto decode_result(std::string_view method, const nlohmann::json& result, Decode decode) {
  try {
    return decode(result);
  } catch (const rpc::rpc_error& e) {
    throw client_error(error_kind::protocol,
                       std::string("handoffd's answer to ") + std::string(method) + " is malformed: " + e.what());
  }
}

}  // namespace

rpc::initialize_result connection::initialize(const rpc::initialize_params& params) {
  auto result = decode_result("initialize", call("initialize", rpc::encode(params)), rpc::decode_initialize_result);
  if (result.protocol_version != rpc::protocol_version)
    throw client_error(error_kind::protocol, "handoffd speaks protocol \"" + result.protocol_version +
                                                 "\"; this client speaks \"" + std::string(rpc::protocol_version) +
                                                 "\"");
  return result;
}

rpc::started_result connection::started(const rpc::started_params& params) {
  return decode_result("subagent/started", call("subagent/started", rpc::encode(params)),
                       rpc::decode_started_result);
}

void connection::progress(const rpc::progress_params& params) { notify("subagent/progress", rpc::encode(params)); }

rpc::completed_result connection::completed(const rpc::completed_params& params) {
  const nlohmann::json rest = rpc::encode_without_final_text(params);
  return decode_result("subagent/completed",
                       call_with_text("subagent/completed", rest, text_member{"finalText", params.final_text},
                                      options_.call_timeout),
                       rpc::decode_completed_result);
}

rpc::check_result connection::check(const rpc::check_params& params) {
  return decode_result("subagent/check", call("subagent/check", rpc::encode(params)), rpc::decode_check_result);
}

rpc::wait_result connection::wait(const rpc::wait_params& params) {
  // The daemon answers at timeoutMs at the latest; the call timeout is the margin on top.
  std::optional<milliseconds> timeout;
  if (params.timeout_ms) timeout = milliseconds(*params.timeout_ms) + options_.call_timeout;
  return decode_result("subagent/wait", call("subagent/wait", rpc::encode(params), timeout),
                       rpc::decode_wait_result);
}

rpc::wait_result connection::wait(const rpc::wait_params& params, const cancel_signal& cancel) {
  std::optional<milliseconds> timeout;
  if (params.timeout_ms) timeout = milliseconds(*params.timeout_ms) + options_.call_timeout;
  return decode_result("subagent/wait",
                       call_with_text("subagent/wait", rpc::encode(params), std::nullopt, timeout, &cancel),
                       rpc::decode_wait_result);
}

rpc::cancel_result connection::cancel(const rpc::cancel_params& params) {
  return decode_result("subagent/cancel", call("subagent/cancel", rpc::encode(params)), rpc::decode_cancel_result);
}

void connection::parent_state(const rpc::parent_state_params& params) { notify("parent/state", rpc::encode(params)); }

rpc::artifact_read_result connection::read_artifact(const rpc::artifact_read_params& params) {
  return decode_result("artifact/read", call("artifact/read", rpc::encode(params)),
                       rpc::decode_artifact_read_result);
}

nlohmann::json connection::daemon_status() {
  auto result = call("daemon/status", nullptr);
  if (!result.is_object())
    throw client_error(error_kind::protocol, "handoffd's answer to daemon/status is not an object");
  return result;
}

}  // namespace handoff::client
