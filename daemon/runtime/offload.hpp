// Runs blocking work (hashing, disk writes, fsync) on the worker pool and resumes the calling
// coroutine on its own executor, so the I/O thread never blocks and never shares state.
//
// `work` is taken by reference and must be a named local of the awaiting coroutine (it lives in
// that coroutine's frame until the result is back). g++ 12 miscompiles lambdas that capture a
// coroutine's by-value parameters, and temporaries with destructors inside a co_await
// expression; a named local captured by reference avoids both. Not a coroutine itself.
#pragma once

#include <exception>
#include <type_traits>
#include <utility>

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_awaitable.hpp>

namespace handoff::daemon {

// `co_await offload(pool, work)` returns work()'s result (which must be default-constructible)
// or rethrows what it threw.
template <class F>
auto offload(asio::thread_pool& pool, F& work) {
  using result = std::invoke_result_t<F>;
  if constexpr (std::is_void_v<result>) {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr)>(
        [&pool](auto handler, F* w) {
          auto home = asio::get_associated_executor(handler);
          asio::post(pool, [h = std::move(handler), w, home]() mutable {
            std::exception_ptr error;
            try {
              (*w)();
            } catch (...) {
              error = std::current_exception();
            }
            asio::post(home, [h = std::move(h), error]() mutable { std::move(h)(error); });
          });
        },
        asio::use_awaitable, &work);
  } else {
    return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr, result)>(
        [&pool](auto handler, F* w) {
          auto home = asio::get_associated_executor(handler);
          asio::post(pool, [h = std::move(handler), w, home]() mutable {
            std::exception_ptr error;
            result value{};
            try {
              value = (*w)();
            } catch (...) {
              error = std::current_exception();
            }
            asio::post(home, [h = std::move(h), error, v = std::move(value)]() mutable {
              std::move(h)(error, std::move(v));
            });
          });
        },
        asio::use_awaitable, &work);
  }
}

}  // namespace handoff::daemon
