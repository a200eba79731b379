// daemon/status: what the daemon holds right now (protocol/daemon_messages.hpp status_result).
// Answered on the I/O thread: counts from the ledger, the queue's last snapshot, and the store
// listing reused while the directory is unchanged.
#include "offload.hpp"
#include "service.hpp"
#include "store_hygiene.hpp"
#include "version.hpp"

namespace handoff::daemon {

namespace {
// How long a status waits for queue removals already under way (one fsync per result).
constexpr auto removals_wait = std::chrono::seconds(2);
}  // namespace

asio::awaitable<reply> service::status(std::shared_ptr<connection>, rpc::status_params) {
  // A status asked after a reply shows that reply's effect on the queue: removals a wait's
  // answer started on the pool finish first.
  const auto give_up = std::chrono::steady_clock::now() + removals_wait;  // a named local (g++ 12)
  co_await queue_changes_.zero(give_up);
  rpc::status_result result;
  // Listing the store takes the pool (two thread hand-offs, more than the work itself on a busy
  // machine: bench/e2e_latency.cpp); a listing the directory has not changed since is reused.
  if (auto cached = store_listing_.reuse(store_.dir())) {
    result.store = std::move(*cached);
  } else {
    const auto listed_at = store_listing::now();
    auto list = [this] { return store_status(store_.dir()); };
    result.store = co_await offload(pool_, list);
    store_listing_.keep(store_.dir(), result.store, listed_at);
  }
  const auto counts = ledger_.count();
  const auto disk = queue_.statistics();  // a snapshot taken as the last change ended
  result.version = handoff_version;
  result.uptime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_at_).count();
  result.connections = connections_.count();
  result.parents = counts.parents;
  result.children = {counts.running, counts.completed, counts.delivering, counts.delivered};
  result.queue = {queue_.dir().string(), disk.results, disk.text_bytes, disk.deliveries, disk.tombstones};
  co_return reply{rpc::encode(result), {}};
}

}  // namespace handoff::daemon
