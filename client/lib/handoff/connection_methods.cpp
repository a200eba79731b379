// The typed calls that do more than request(): initialize checks the protocol version,
// completed writes its final text straight from the caller's string, wait sets its timeout and
// may be cancelled.
#include <string>

#include "handoff/connection.hpp"

namespace handoff::client {

namespace m = rpc::methods;

rpc::initialize_result connection::initialize(const rpc::initialize_params& params) {
  auto result = request(m::initialize, params);
  if (result.protocol_version != rpc::protocol_version)
    throw client_error(error_kind::protocol, "handoffd speaks protocol \"" + result.protocol_version +
                                                 "\"; this client speaks \"" + std::string(rpc::protocol_version) +
                                                 "\"");
  return result;
}

rpc::started_result connection::started(const rpc::started_params& params) {
  return request(m::subagent_started, params);
}

void connection::progress(const rpc::progress_params& params) { notify(m::subagent_progress, params); }

rpc::completed_result connection::completed(const rpc::completed_params& params) {
  const nlohmann::json rest = rpc::encode_without_final_text(params);
  const std::string_view name = m::subagent_completed.name;
  return typed_call<rpc::completed_result>(name, rest, text_member{"finalText", params.final_text},
                                          options_.call_timeout);
}

rpc::check_result connection::check(const rpc::check_params& params) { return request(m::subagent_check, params); }

rpc::wait_result connection::wait(const rpc::wait_params& params) {
  // The daemon answers at timeoutMs at the latest; the call timeout is the margin on top.
  std::optional<milliseconds> timeout;
  if (params.timeout_ms) timeout = milliseconds(*params.timeout_ms) + options_.call_timeout;
  return request(m::subagent_wait, params, timeout);
}

rpc::wait_result connection::wait(const rpc::wait_params& params, const cancel_signal& cancel) {
  std::optional<milliseconds> timeout;
  if (params.timeout_ms) timeout = milliseconds(*params.timeout_ms) + options_.call_timeout;
  const std::string_view name = m::subagent_wait.name;
  return typed_call<rpc::wait_result>(name, rpc::encode(params), std::nullopt, timeout, &cancel);
}

rpc::cancel_result connection::cancel(const rpc::cancel_params& params) { return request(m::subagent_cancel, params); }

void connection::parent_state(const rpc::parent_state_params& params) { notify(m::parent_state, params); }

rpc::artifact_read_result connection::read_artifact(const rpc::artifact_read_params& params) {
  return request(m::artifact_read, params);
}

rpc::status_result connection::daemon_status() {
  // No params at all, as always.
  return typed_call<rpc::status_result>(m::daemon_status.name, nullptr, std::nullopt, options_.call_timeout);
}

}  // namespace handoff::client
