#include "parent_calls.hpp"

#include <spdlog/spdlog.h>

#include "protocol/methods.hpp"

namespace handoff::daemon {

asio::awaitable<std::optional<context_usage>> ask_usage(const std::shared_ptr<connection>& endpoint,
                                                        const std::string& parent_id, std::chrono::milliseconds timeout) {
  const auto& method = rpc::methods::context_usage;
  const rpc::usage_request_params params{parent_id};
  call_outcome<std::optional<rpc::usage_dto>> outcome = co_await endpoint->call(method, params, timeout);
  if (!outcome.ok()) {
    if (outcome.error().how == call_error::kind::bad_result)
      spdlog::warn("{} for '{}' answered nonsense ({}); using static caps", method.name, parent_id,
                   outcome.error().message);
    else
      spdlog::debug("{} for '{}': {}", method.name, parent_id, outcome.error().message);
    co_return std::nullopt;
  }
  const std::optional<rpc::usage_dto>& u = outcome.result();
  if (!u) co_return std::nullopt;
  co_return context_usage{u->tokens, u->context_window, u->percent};
}

}  // namespace handoff::daemon
