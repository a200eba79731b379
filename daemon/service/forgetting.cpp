// The forgetting sweep: the ledger forgets quiet parents and settled children once the grace
// period (--forget-after-ms) has passed (ledger.hpp says exactly what qualifies). The sweep runs
// every grace / 4, between 10 ms and 60 s, so something is forgotten at most that long after
// its grace ended. Forgetting touches memory only: the queue keeps its tombstones, which is how
// a wait on a forgotten child is answered `forgotten`.
#include <algorithm>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/use_awaitable.hpp>
#include <spdlog/spdlog.h>

#include "runtime/as_tuple.hpp"
#include "service.hpp"

namespace handoff::daemon {

namespace {
constexpr auto min_sweep = std::chrono::milliseconds(10);
constexpr auto max_sweep = std::chrono::milliseconds(60'000);
}  // namespace

void service::start_forgetting() { asio::co_spawn(io_, forget_loop(), asio::detached); }

asio::awaitable<void> service::forget_loop() {
  const auto every = std::clamp(ledger_.grace() / 4, std::chrono::milliseconds(min_sweep), max_sweep);
  while (!stopping_) {
    forget_timer_.expires_after(every);
    co_await forget_timer_.async_wait(as_tuple);
    if (stopping_) break;
    const auto gone = ledger_.forget_due();
    if (gone.parents > 0 || gone.children > 0)
      spdlog::debug("forgot {} parents and {} children", gone.parents, gone.children);
  }
}

}  // namespace handoff::daemon
