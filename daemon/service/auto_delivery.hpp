// Auto-delivery (docs/design.md §10): when a parent is idle and results are pending, ask its
// endpoint for context usage, project one batch under the auto-delivery caps, record it durably,
// send parent/deliver, and drop the results only when the client acknowledged it.
// Unacknowledged deliveries are resent unchanged (same deliveryId) whenever the parent's endpoint
// comes back. Completions arriving together are coalesced (--flush-delay-ms).
//
// I/O thread only, like the ledger it works on.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include <asio/awaitable.hpp>
#include <asio/io_context.hpp>
#include <asio/thread_pool.hpp>

#include "batch_builder.hpp"
#include "config.hpp"
#include "net/connection.hpp"
#include "engine/queue/pending_queue.hpp"
#include "runtime/in_flight.hpp"
#include "ledger/ledger.hpp"

namespace handoff::daemon {

class auto_delivery {
 public:
  // The parent's endpoint connection, if it is open.
  using endpoint_lookup = std::function<std::shared_ptr<connection>(const std::string& parent_id)>;

  // `queue_changes` counts the queue removals an acknowledgement starts (daemon/status waits for
  // them).
  auto_delivery(const config& cfg, asio::io_context& io, asio::thread_pool& pool, pending_queue& queue, ledger& l,
                batch_builder& batches, in_flight& queue_changes, endpoint_lookup endpoint_of);

  // A flush of `parent_id` after the coalescing delay (at once when `immediately`); one already
  // scheduled covers it, one running is followed by another.
  void schedule(const std::string& parent_id, bool immediately = false);
  // No flush is scheduled or batch started from now on; those under way finish (shutdown).
  void stop() noexcept { stopping_ = true; }
  // Auto-deliveries in progress: shutdown lets them finish.
  in_flight& running() noexcept { return flushes_; }

 private:
  asio::awaitable<void> delayed_flush(std::string parent_id, std::chrono::milliseconds delay);
  asio::awaitable<void> flush(std::string parent_id);
  asio::awaitable<bool> deliver_next_batch(std::shared_ptr<connection> endpoint, std::string parent_id);
  asio::awaitable<bool> send_delivery(std::shared_ptr<connection> endpoint, stored_delivery d);
  void flush_ended(const std::string& parent_id);

  // The scheduling of one parent; erased when neither scheduled nor running.
  struct flush_state {
    bool scheduled = false;  // a flush will start after the coalescing delay
    bool running = false;    // a flush is in progress
    bool again = false;      // a flush was asked for while one ran: run one after it
  };

  const config& cfg_;
  asio::io_context& io_;
  asio::thread_pool& pool_;
  pending_queue& queue_;
  ledger& ledger_;
  batch_builder& batches_;
  in_flight& queue_changes_;
  endpoint_lookup endpoint_of_;
  std::unordered_map<std::string, flush_state> flush_states_;
  in_flight flushes_;  // auto-deliveries in progress
  std::uint64_t delivery_counter_ = 0;
  bool stopping_ = false;
};

}  // namespace handoff::daemon
