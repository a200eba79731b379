// The completion token of the daemon's coroutines that look at an operation's error as a value
// (a cancelled timer, a closed socket) instead of catching it: `co_await op(as_tuple)` gives
// (error_code, ...).
#pragma once

#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

namespace handoff::daemon {

inline constexpr auto as_tuple = asio::experimental::as_tuple(asio::use_awaitable);

}  // namespace handoff::daemon
