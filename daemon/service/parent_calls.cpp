#include "parent_calls.hpp"

#include <spdlog/spdlog.h>

#include "protocol/daemon_messages.hpp"

namespace handoff::daemon {

asio::awaitable<std::optional<context_usage>> ask_usage(const std::shared_ptr<connection>& endpoint,
                                                        const std::string& parent_id, std::chrono::milliseconds timeout) {
  const nlohmann::json params = rpc::encode(rpc::usage_request_params{parent_id});
  auto outcome = co_await endpoint->call("context/usage", params, timeout);
  if (!outcome.ok() || outcome.result.is_null()) {
    if (!outcome.ok()) spdlog::debug("context/usage for '{}': {}", parent_id, outcome.error);
    co_return std::nullopt;
  }
  try {
    auto u = rpc::decode_usage(outcome.result);
    co_return context_usage{u.tokens, u.context_window, u.percent};
  } catch (const std::exception& e) {
    spdlog::warn("context/usage for '{}' answered nonsense ({}); using static caps", parent_id, e.what());
    co_return std::nullopt;
  }
}

}  // namespace handoff::daemon
