// Start-up: what the durable queue held when the daemon last stopped (or crashed) goes back into
// the ledger, completed or, when an unacknowledged delivery carries it, delivering; then the
// forgetting sweep starts.
#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <spdlog/spdlog.h>

#include "service.hpp"

namespace handoff::daemon {

std::vector<std::string> service::recover() {
  std::vector<std::string> problems;
  auto recovered = queue_.recover(&problems);
  spdlog::info("recovered {} queued results and {} unacknowledged deliveries", recovered.results.size(),
               recovered.deliveries.size());
  ledger_.recover(std::move(recovered));
  asio::co_spawn(io_, forget_loop(), asio::detached);
  return problems;
}

}  // namespace handoff::daemon
