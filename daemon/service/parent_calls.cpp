#include "parent_calls.hpp"

#include <utility>

#include <spdlog/spdlog.h>

#include "protocol/methods.hpp"

namespace handoff::daemon {

asio::awaitable<std::optional<context_usage>> ask_usage(const std::shared_ptr<connection>& endpoint,
                                                        const std::string& parent_id, std::chrono::milliseconds timeout) {
  const auto& method = rpc::methods::context_usage;
  rpc::usage_request_params params{parent_id};  // a named local: g++ 12 and prvalues in co_await
  auto outcome = co_await endpoint->call(method, std::move(params), timeout);
  if (!outcome.ok() || outcome.result.is_null()) {
    if (!outcome.ok()) spdlog::debug("{} for '{}': {}", method.name, parent_id, outcome.error);
    co_return std::nullopt;
  }
  try {
    auto u = rpc::decode_usage(outcome.result);
    co_return context_usage{u.tokens, u.context_window, u.percent};
  } catch (const std::exception& e) {
    spdlog::warn("{} for '{}' answered nonsense ({}); using static caps", method.name, parent_id, e.what());
    co_return std::nullopt;
  }
}

}  // namespace handoff::daemon
