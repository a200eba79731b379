// A count of things in progress that someone may wait to see reach zero: shutdown waits for the
// open connections and the running auto-deliveries, daemon/status for the queue removals a
// reply started. Waiting is an awaitable woken by the last `done()`, not a polling loop.
// I/O thread only.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/steady_timer.hpp>

namespace handoff::daemon {

class in_flight {
 public:
  explicit in_flight(asio::any_io_executor executor) : executor_(std::move(executor)) {}
  in_flight(const in_flight&) = delete;
  in_flight& operator=(const in_flight&) = delete;

  void add() noexcept { ++count_; }
  // One fewer; at zero every `zero()` in progress completes.
  void done() noexcept;
  std::size_t count() const noexcept { return count_; }
  // When the count last fell to zero (construction, when it never rose).
  std::chrono::steady_clock::time_point zero_since() const noexcept { return zero_since_; }

  // Counts one for its lifetime (however the work ends).
  class scope {
   public:
    explicit scope(in_flight& n) noexcept : n_(&n) { n.add(); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    ~scope() { n_->done(); }

   private:
    in_flight* n_;
  };

  // Completes when the count is zero (true) or `deadline` passed first (false).
  asio::awaitable<bool> zero(std::chrono::steady_clock::time_point deadline);

 private:
  asio::any_io_executor executor_;
  std::size_t count_ = 0;
  std::chrono::steady_clock::time_point zero_since_ = std::chrono::steady_clock::now();
  std::vector<asio::steady_timer*> waiting_;  // timers of zero() calls in progress
};

}  // namespace handoff::daemon
