#include "upkeep/periodic_gc.hpp"

#include <chrono>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <spdlog/spdlog.h>

#include "upkeep/legacy_store.hpp"
#include "runtime/offload.hpp"
#include "upkeep/store_hygiene.hpp"

namespace handoff::daemon {

periodic_gc::periodic_gc(asio::io_context& io, asio::thread_pool& pool, const config& cfg,
                         const artifact_store& store, pending_queue& queue)
    : io_(io), pool_(pool), cfg_(cfg), store_(store), queue_(queue), timer_(io) {}

void periodic_gc::start() { asio::co_spawn(io_, run(), asio::detached); }

void periodic_gc::stop() {
  stopping_ = true;
  timer_.cancel();
}

asio::awaitable<void> periodic_gc::run() {
  const bool periodic = cfg_.gc_interval_s != 0;
  const hygiene_settings settings = periodic ? hygiene_settings::from(cfg_) : hygiene_settings::temps_only();
  while (!stopping_) {
    try {
      auto collect = [this, &settings] { return collect_garbage(store_.dir(), queue_, settings, false); };
      const hygiene_report r = co_await offload(pool_, collect);
      const auto level = r.outcome.removed.empty() ? spdlog::level::debug : spdlog::level::info;
      spdlog::log(level, "store gc: removed {} files, {} artifacts ({} bytes) kept, {} tombstones expired",
                  r.outcome.removed.size(), r.plan.kept_files, r.plan.kept_bytes, r.tombstones_expired);
      for (const std::string& problem : r.problems) spdlog::warn("store gc: {}", problem);
    } catch (const std::exception& e) {
      spdlog::warn("store gc failed: {}", e.what());
    }
    if (!cfg_.legacy_artifact_dir.empty()) {
      try {
        auto drain = [this, &settings] { return drain_legacy_store(cfg_.legacy_artifact_dir, queue_, settings, false); };
        log_legacy_drain(cfg_.legacy_artifact_dir, co_await offload(pool_, drain));
      } catch (const std::exception& e) {
        spdlog::warn("store gc of the former artifact dir failed: {}", e.what());
      }
    }
    if (!periodic) co_return;
    timer_.expires_after(std::chrono::seconds(cfg_.gc_interval_s));
    co_await timer_.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
  }
}

}  // namespace handoff::daemon
