// daemon/status: what the daemon holds right now (protocol/daemon_messages.hpp status_result).
// Counts from the ledger, the queue's last snapshot, and the store listing reused while the
// directory is unchanged. Usually answered at once on the I/O thread; it waits (status_later)
// only for queue removals under way and for a new listing of the store.
#include "runtime/offload.hpp"
#include "service.hpp"
#include "upkeep/store_hygiene.hpp"
#include "system/version.hpp"

namespace handoff::daemon {

now_or_later<rpc::status_result> service::status(const caller&, rpc::status_params) {
  // A status asked after a reply shows that reply's effect on the queue: while removals a
  // wait's answer started on the pool run, it waits for them.
  if (queue_changes_.count() == 0)
    if (auto store = store_listing_.reuse(store_.dir())) return reply<rpc::status_result>{status_with(std::move(*store)), {}};
  return status_later();
}

asio::awaitable<reply<rpc::status_result>> service::status_later() {
  co_await removals_settled();
  rpc::store_status store;
  // Listing the store takes the pool (two thread hand-offs, more than the work itself on a busy
  // machine: bench/e2e_latency.cpp); a listing the directory has not changed since is reused.
  if (auto cached = store_listing_.reuse(store_.dir())) {
    store = std::move(*cached);
  } else {
    const auto listed_at = store_listing::now();
    auto list = [this] { return store_status(store_.dir()); };
    store = co_await offload(pool_, list);
    store_listing_.keep(store_.dir(), store, listed_at);
  }
  co_return reply<rpc::status_result>{status_with(std::move(store)), {}};
}

rpc::status_result service::status_with(rpc::store_status store) const {
  const auto counts = ledger_.count();
  const auto disk = queue_.statistics();  // a snapshot taken as the last change ended
  rpc::status_result result;
  result.version = handoff_version;
  result.uptime_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_at_).count();
  result.connections = connections_.count();
  result.parents = counts.parents;
  result.children = {counts.running, counts.completed, counts.delivering, counts.delivered};
  result.waits = counts.waits;
  result.queue = {queue_.dir().string(), disk.results, disk.text_bytes, disk.deliveries, disk.tombstones, disk.groups,
                  disk.changes};
  result.store = std::move(store);
  return result;
}

}  // namespace handoff::daemon
