// `daemon/gc`: one collection of the artifact store on demand (`handoff gc [--dry-run]`).
//
// params: {dryRun?: boolean}   true: plan only, remove nothing (default false)
// result: store_hygiene.hpp's to_json: removed [{name, sha256|null, bytes, mtimeUnixS, reason}],
//         removedBytes, keptFiles, keptBytes, protectedFiles, protectedBytes, overQuota, ignored,
//         skipped, tombstonesExpired, limits {maxAgeS, maxBytes, keepDeliveredS}, problems.
#include <spdlog/spdlog.h>

#include "offload.hpp"
#include "service.hpp"
#include "store_hygiene.hpp"

namespace handoff::daemon {

using nlohmann::json;
using rpc::errc;
using rpc::rpc_error;

asio::awaitable<reply> service::gc(std::shared_ptr<connection> conn, const json& params) {
  bool dry_run = false;
  if (!params.is_null()) {
    if (!params.is_object()) throw rpc_error(errc::invalid_params, "params: expected an object");
    if (const auto it = params.find("dryRun"); it != params.end()) {
      if (!it->is_boolean()) throw rpc_error(errc::invalid_params, "dryRun: expected true or false");
      dry_run = it->get<bool>();
    }
  }
  const hygiene_settings settings = hygiene_settings::from(cfg_);
  auto collect = [this, &settings, dry_run] { return collect_garbage(store_.dir(), queue_, settings, dry_run); };
  hygiene_report report = co_await offload(pool_, collect);
  if (!dry_run)
    spdlog::info("connection {}: daemon/gc removed {} files", conn->id(), report.outcome.removed.size());
  co_return reply{to_json(report), {}};
}

}  // namespace handoff::daemon
