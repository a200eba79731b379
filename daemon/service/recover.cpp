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
  ledger_.recover(std::move(recovered));
  return problems;
}

}  // namespace handoff::daemon
