#include "handoff/parent_endpoint.hpp"

#include <utility>

namespace handoff::client {
namespace {

const std::string usage_method(rpc::methods::context_usage.name);
const std::string deliver_method(rpc::methods::parent_deliver.name);

}  // namespace

parent_endpoint::parent_endpoint(connection& c, std::string parent_id, parent_callbacks callbacks,
                                 std::string client_name)
    : connection_(c), parent_id_(std::move(parent_id)), callbacks_(std::move(callbacks)) {
  // Handlers first: a resent delivery may follow the initialize reply at once.
  connection_.on_request(usage_method, [this](const nlohmann::json& params) { return answer_usage(params); });
  connection_.on_request(deliver_method, [this](const nlohmann::json& params) { return answer_deliver(params); });
  rpc::initialize_params params;
  params.client_name = std::move(client_name);
  params.parent_id = parent_id_;
  try {
    registration_ = connection_.initialize(params);
  } catch (...) {
    connection_.on_request(usage_method, nullptr);
    connection_.on_request(deliver_method, nullptr);
    throw;
  }
}

parent_endpoint::~parent_endpoint() {
  connection_.on_request(usage_method, nullptr);
  connection_.on_request(deliver_method, nullptr);
}

void parent_endpoint::report_idle() { connection_.parent_state(rpc::parent_state_params{parent_id_, "idle"}); }

void parent_endpoint::report_busy() { connection_.parent_state(rpc::parent_state_params{parent_id_, "busy"}); }

nlohmann::json parent_endpoint::answer_usage(const nlohmann::json&) {
  if (!callbacks_.usage) return nullptr;
  const auto usage = callbacks_.usage();
  return rpc::encode_result(usage);
}

nlohmann::json parent_endpoint::answer_deliver(const nlohmann::json& params) {
  // A batch that does not decode is refused (invalid_params) and stays queued, like one the
  // callback refused.
  try {
    const auto delivery = rpc::decode_params<rpc::deliver_params>(params, rpc::wire::default_limits());
    if (!callbacks_.deliver)
      throw rpc::rpc_error(rpc::errc::method_not_found, "this endpoint takes no deliveries; the batch stays queued");
    callbacks_.deliver(delivery);
  } catch (...) {
    ++refused_;
    throw;
  }
  ++acknowledged_;
  return rpc::encode_result(rpc::deliver_result{});
}

}  // namespace handoff::client
