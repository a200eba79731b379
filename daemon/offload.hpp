// Runs blocking work (hashing, disk writes, fsync) on the worker pool and resumes the calling
// coroutine on its own executor, so the I/O thread never blocks and never shares state.
#pragma once

#include <type_traits>
#include <utility>

#include <asio/co_spawn.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_awaitable.hpp>

namespace handoff::daemon {

// Exceptions thrown by `work` are rethrown in the caller.
template <class F>
asio::awaitable<std::invoke_result_t<F>> offload(asio::thread_pool& pool, F work) {
  using result = std::invoke_result_t<F>;
  co_return co_await asio::co_spawn(
      pool.get_executor(),
      [w = std::move(work)]() mutable -> asio::awaitable<result> { co_return w(); },
      asio::use_awaitable);
}

}  // namespace handoff::daemon
