// Start-up: what the durable queue held when the daemon last stopped (or crashed) goes back into
// the ledger, completed or, when an unacknowledged delivery carries it, delivering. main() then
// starts the forgetting sweep (start_forgetting, forgetting.cpp).
#include <spdlog/spdlog.h>

#include "service.hpp"

namespace handoff::daemon {

std::vector<std::string> service::recover() {
  std::vector<std::string> problems;
  auto recovered = queue_.recover(&problems);
  spdlog::info("recovered {} queued results and {} unacknowledged deliveries", recovered.results.size(),
               recovered.deliveries.size());
  // A wait's artifacts are synced after its answer, and its results leave the queue only after
  // that sync (wait.cpp): so a held result's artifact may be one a power loss cut short, and the
  // queue still has its text to mend it with (docs/design.md §7).
  for (const held_result& r : recovered.results) {
    try {
      if (std::string done = store_.repair(r.sha256, [&] { return queue_.open_text(r); }); !done.empty())
        spdlog::warn("artifact repair: {}", done);
    } catch (const std::exception& e) {
      spdlog::warn("artifact repair: the artifact of result {} was not checked: {}", r.seq, e.what());
    }
  }
  ledger_.recover(std::move(recovered));
  store_.keep_spare();  // for the first answer's artifact
  return problems;
}

}  // namespace handoff::daemon
