// `co_await queue_put(pool, queue, info, text)`: a completion made durable by the queue's group
// commit. The pool hashes and hands it over; a put that finds the queue's writer idle is
// written by its pool thread itself, and the puts that arrive meanwhile go to the writer
// thread as its next group (eight completions at once still share one or two syncs). The
// coroutine resumes on its own executor when the group is on disk, with the outcome or what
// the queue threw.
//
// `info` and `text` must be named locals of the awaiting coroutine (see offload.hpp): they are
// read on the pool and by the queue's writer until the coroutine resumes.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/post.hpp>
#include <asio/thread_pool.hpp>
#include <asio/use_awaitable.hpp>

#include "engine/queue/pending_queue.hpp"

namespace handoff::daemon {

inline auto queue_put(asio::thread_pool& pool, pending_queue& queue, const completion& info, const std::string& text) {
  using outcome = pending_queue::put_outcome;
  return asio::async_initiate<const asio::use_awaitable_t<>&, void(std::exception_ptr, outcome)>(
      [&pool, &queue, &info, &text](auto handler) {
        auto home = asio::get_associated_executor(handler);
        // Shared: the queue's callback is a std::function, which must be copyable.
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        auto answer = [h, home](std::exception_ptr error, outcome result) {
          asio::post(home, [h, error, result = std::move(result)]() mutable { std::move(*h)(error, std::move(result)); });
        };
        asio::post(pool, [answer, &queue, &info, &text] {
          // put_async reports through `answer`; what it throws itself (before taking the change)
          // must not escape into the pool.
          try {
            queue.put_async(info, text, answer);
          } catch (...) {
            answer(std::current_exception(), {});
          }
        });
      },
      asio::use_awaitable);
}

}  // namespace handoff::daemon
