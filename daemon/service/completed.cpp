// subagent/completed: the final text is made durable in the queue (on the pool) before the
// answer, then the ledger records the completion; a completion is acknowledged only once on disk.
#include <spdlog/spdlog.h>

#include "runtime/offload.hpp"
#include "queue_put.hpp"
#include "service.hpp"

namespace handoff::daemon {

using rpc::errc;
using rpc::rpc_error;

asio::awaitable<reply<rpc::completed_result>> service::completed(caller, rpc::completed_params p) {
  auto status = parse_result_status(p.status);
  if (!status) throw rpc_error(errc::invalid_params, "status: expected done, error or cancelled");
  completion info{p.parent_id, p.child_id, p.title, *status, p.error};
  const std::string text = std::move(p.final_text);
  // Known (running) from now on, so a wait pipelined right behind this request waits for it
  // rather than failing with "unknown child" while the text is being written. A child this made
  // known is unknown again if the queue refuses the completion as a conflict (a forgotten child
  // completed with another text): it is not left running for ever. After a failed write it stays
  // running: its completion is to be sent again.
  const bool was_known = ledger_.find_child(p.parent_id, p.child_id) != nullptr;
  ledger_.start(p.parent_id, p.child_id, p.title);
  if (info.title.empty())
    if (const child* known = ledger_.find_child(p.parent_id, p.child_id)) info.title = known->title;

  pending_queue::put_outcome outcome;
  try {
    const in_flight::scope counted(pool_answers_);
    outcome = co_await queue_put(pool_, queue_, info, text);
  } catch (const queue_conflict& e) {
    if (!was_known) ledger_.unstart(p.parent_id, p.child_id);
    throw rpc_error(errc::conflict, e.what());
  } catch (const queue_error& e) {
    spdlog::error("queue write failed for {}/{}: {}", p.parent_id, p.child_id, e.what());
    throw rpc_error(errc::storage_failed, std::string("not saved, not acknowledged: ") + e.what());
  }

  switch (ledger_.complete(outcome)) {
    case completion_effect::held:
      if (const parent* par = ledger_.find(p.parent_id); par != nullptr && par->idle) deliveries_.schedule(p.parent_id);
      break;
    case completion_effect::consume_now: {
      const std::uint64_t seq = outcome.held.seq;
      auto consume = [this, seq] {
        for (const auto& problem : queue_.consume({seq}))
          spdlog::warn("a cancelled child's result was not removed from the queue: {}", problem);
      };
      co_await offload(pool_, consume);
      break;
    }
    case completion_effect::already_delivered:
    case completion_effect::unchanged: break;
  }
  rpc::completed_result result{outcome.duplicate, outcome.held.sha256, outcome.held.shape.bytes,
                               outcome.held.shape.lines};
  co_return reply<rpc::completed_result>{result, {}};
}

}  // namespace handoff::daemon
