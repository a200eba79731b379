#include "runtime/in_flight.hpp"

#include <algorithm>

#include <asio/use_awaitable.hpp>

#include "runtime/as_tuple.hpp"

namespace handoff::daemon {

void in_flight::done() noexcept {
  if (count_ > 0) --count_;
  if (count_ != 0) return;
  zero_since_ = std::chrono::steady_clock::now();
  // Copied: cancelling only queues the completions; the waiters leave the list when they resume.
  const auto woken = waiting_;
  for (auto* timer : woken) timer->cancel();
}

asio::awaitable<bool> in_flight::zero(std::chrono::steady_clock::time_point deadline) {
  asio::steady_timer timer(executor_);
  // A loop: the count may rise again between the wake-up and the resumption.
  while (count_ > 0 && std::chrono::steady_clock::now() < deadline) {
    timer.expires_at(deadline);
    // Listed while suspended, unlisted however the wait ends (even a frame destroyed at exit).
    struct listed {
      std::vector<asio::steady_timer*>& list;
      asio::steady_timer* timer;
      ~listed() { std::erase(list, timer); }
    } entry{waiting_, &timer};
    waiting_.push_back(&timer);
    co_await timer.async_wait(as_tuple);
  }
  co_return count_ == 0;
}

}  // namespace handoff::daemon
