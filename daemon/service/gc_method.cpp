// `daemon/gc`: one collection of the artifact store on demand (`handoff gc [--dry-run]`).
// Params and result: protocol/daemon_messages.hpp (gc_params, gc_result).
#include <spdlog/spdlog.h>

#include "upkeep/legacy_store.hpp"
#include "runtime/offload.hpp"
#include "service.hpp"
#include "upkeep/store_hygiene.hpp"

namespace handoff::daemon {

asio::awaitable<reply<rpc::gc_result>> service::gc(caller from_param, rpc::gc_params p) {
  const caller from = std::move(from_param);
  const bool dry_run = p.dry_run;
  // A collection asked after a wait's reply sees that reply's effect: the results it consumed
  // leave the queue on the pool after the reply, and until then they protect their artifacts.
  co_await removals_settled();
  const hygiene_settings settings = hygiene_settings::from(cfg_);
  auto collect = [this, &settings, dry_run] { return collect_garbage(store_.dir(), queue_, settings, dry_run); };
  hygiene_report report = co_await offload(pool_, collect);
  // The former default store drains by the same rules; its outcome goes to the log, the reply
  // is the store's.
  if (!dry_run && !cfg_.legacy_artifact_dir.empty()) {
    try {
      auto drain = [this, &settings] { return drain_legacy_store(cfg_.legacy_artifact_dir, queue_, settings, false); };
      log_legacy_drain(cfg_.legacy_artifact_dir, co_await offload(pool_, drain));
    } catch (const std::exception& e) {
      spdlog::warn("store gc of the former artifact dir failed: {}", e.what());
    }
  }
  if (!dry_run)
    spdlog::info("connection {}: daemon/gc removed {} files", from.conn->id(), report.outcome.removed.size());
  co_return reply<rpc::gc_result>{to_wire(report), {}};
}

}  // namespace handoff::daemon
