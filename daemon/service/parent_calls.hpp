// The daemon's calls to a parent's endpoint that more than one part makes: context/usage, asked
// before a batch is built (subagent/wait for another connection's parent, auto-delivery).
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <asio/awaitable.hpp>

#include "net/connection.hpp"
#include "engine/text/budget.hpp"

namespace handoff::daemon {

// context/usage to `endpoint` for `parent_id`, at most `timeout`: nullopt when it did not answer,
// answered null, or answered nonsense (then the static caps apply).
asio::awaitable<std::optional<context_usage>> ask_usage(const std::shared_ptr<connection>& endpoint,
                                                        const std::string& parent_id, std::chrono::milliseconds timeout);

}  // namespace handoff::daemon
