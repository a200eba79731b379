#include "auto_delivery.hpp"

#include <chrono>
#include <random>

#include <asio/co_spawn.hpp>
#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "runtime/as_tuple.hpp"
#include "runtime/offload.hpp"
#include "parent_calls.hpp"
#include "protocol/daemon_messages.hpp"
#include "protocol/methods.hpp"
#include "to_wire.hpp"

namespace handoff::daemon {
namespace {


void log_failure(std::exception_ptr e, const char* what) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    spdlog::error("{}: {}", what, x.what());
  }
}

// Unique across restarts without shared state: wall-clock milliseconds, a counter, random bits.
std::string new_delivery_id(std::uint64_t counter) {
  static const std::uint64_t salt = std::random_device{}();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch()).count();
  char buf[64];
  std::snprintf(buf, sizeof buf, "dlv-%llx-%llx-%04llx", static_cast<unsigned long long>(ms),
                static_cast<unsigned long long>(counter), static_cast<unsigned long long>(salt & 0xffff));
  return buf;
}

}  // namespace

auto_delivery::auto_delivery(const config& cfg, asio::io_context& io, asio::thread_pool& pool, pending_queue& queue,
                             ledger& l, batch_builder& batches, in_flight& queue_changes, endpoint_lookup endpoint_of)
    : cfg_(cfg),
      io_(io),
      pool_(pool),
      queue_(queue),
      ledger_(l),
      batches_(batches),
      queue_changes_(queue_changes),
      endpoint_of_(std::move(endpoint_of)),
      flushes_(io.get_executor()) {}

void auto_delivery::schedule(const std::string& parent_id, bool immediately) {
  if (ledger_.find(parent_id) == nullptr || stopping_) return;
  flush_state& f = flush_states_[parent_id];
  if (f.scheduled) return;
  f.scheduled = true;
  auto delay = std::chrono::milliseconds(immediately ? 0 : cfg_.flush_delay_ms);
  asio::co_spawn(io_, delayed_flush(parent_id, delay),
                 [](std::exception_ptr e) { log_failure(e, "auto-delivery failed"); });
}

asio::awaitable<void> auto_delivery::delayed_flush(std::string parent_param, std::chrono::milliseconds delay) {
  const std::string parent_id = std::move(parent_param);
  if (delay.count() > 0) {
    asio::steady_timer t(io_, delay);
    co_await t.async_wait(as_tuple);
  }
  flush_states_[parent_id].scheduled = false;
  co_await flush(parent_id);
}

void auto_delivery::flush_ended(const std::string& parent_id) {
  auto it = flush_states_.find(parent_id);
  if (it == flush_states_.end()) return;
  flush_state& f = it->second;
  f.running = false;
  if (f.again) {
    f.again = false;
    schedule(parent_id, true);
  }
  if (!f.scheduled && !f.running) flush_states_.erase(parent_id);
}

asio::awaitable<void> auto_delivery::flush(std::string parent_param) {
  const std::string parent_id = std::move(parent_param);
  auto endpoint = endpoint_of_(parent_id);
  flush_state& f = flush_states_[parent_id];
  if (f.running) {
    // The running flush may be bound to an endpoint that is going away (a parent that
    // reconnected right after an acknowledgement) and would end without looking again: once
    // it ends, another flush runs, on whatever endpoint the parent has then.
    f.again = true;
    co_return;
  }
  f.running = true;
  // Runs when the flush ends, or when its frame is destroyed with the io_context at exit
  // (main keeps the service alive until then; schedule does nothing once stopped).
  struct end_flush {
    auto_delivery* s;
    std::string id;
    in_flight::scope counted;
    ~end_flush() {
      try {
        s->flush_ended(id);
      } catch (const std::exception& e) {
        spdlog::error("could not schedule another auto-delivery for '{}': {}", id, e.what());
      }
    }
  } guard{this, parent_id, in_flight::scope(flushes_)};
  if (!endpoint) co_return;

  // 1. Whatever was sent before and never acknowledged goes first, unchanged.
  for (;;) {
    const parent* p = ledger_.find(parent_id);
    if (p == nullptr || p->unacked.empty()) break;
    const stored_delivery oldest = p->unacked.front();
    if (!co_await send_delivery(endpoint, oldest)) co_return;
  }
  // 2. New batches while the parent is idle and results wait.
  while (co_await deliver_next_batch(endpoint, parent_id)) {
  }
}

asio::awaitable<bool> auto_delivery::deliver_next_batch(std::shared_ptr<connection> endpoint_param, std::string parent_param) {
  const std::shared_ptr<connection> endpoint = std::move(endpoint_param);
  const std::string parent_id = std::move(parent_param);
  const parent* p = ledger_.find(parent_id);
  if (p == nullptr || !p->idle || stopping_ || !endpoint->is_open()) co_return false;
  reservation taken = ledger_.reserve_deliverable(parent_id);
  if (taken.empty()) co_return false;

  batch_options options = batches_.options_for(cfg_.auto_caps);
  options.usage = co_await ask_usage(endpoint, parent_id, std::chrono::milliseconds(cfg_.usage_timeout_ms));
  const std::vector<held_result> held = taken.held();
  // Whatever fails from here on drops `taken`, which gives the results back.
  const batch_builder::built_batch built = co_await batches_.build(held, options);
  taken.keep_only(built.admitted_seqs);
  rpc::deliver_params params;
  params.parent_id = parent_id;
  params.delivery_id = new_delivery_id(++delivery_counter_);
  params.batch = to_wire(built.b);
  // Kept as the bytes that are sent, on every resend too.
  const stored_delivery d{parent_id, params.delivery_id, built.admitted_seqs, rpc::encode_params_text(params)};
  auto record = [this, &d] { queue_.begin_delivery(d); };
  co_await offload(pool_, record);
  ledger_.begin_delivery(std::move(taken), d);
  spdlog::info("delivery {} to '{}': {} results, {} deferred, {} budget", d.delivery_id, parent_id,
               d.seqs.size(), built.b.deferred.size(), built.b.budget.dynamic ? "dynamic" : "static");
  co_return co_await send_delivery(endpoint, d);
}

asio::awaitable<bool> auto_delivery::send_delivery(std::shared_ptr<connection> endpoint_param, stored_delivery delivery) {
  const std::shared_ptr<connection> endpoint = std::move(endpoint_param);
  const stored_delivery d = std::move(delivery);
  // The params as recorded with the delivery: the same bytes on every resend. Any result
  // acknowledges it (deliver_result takes any).
  const encoded_params params{d.payload};
  call_outcome<rpc::deliver_result> outcome =
      co_await endpoint->call(rpc::methods::parent_deliver, params, std::chrono::milliseconds(cfg_.deliver_timeout_ms));
  if (!outcome.ok()) {
    spdlog::info("delivery {} to '{}' not acknowledged ({}); it stays queued", d.delivery_id, d.parent_id,
                 outcome.error().message);
    co_return false;
  }
  // The ledger first, so nothing (a check) reads texts being removed; if the removal fails on
  // disk the delivery is simply made again after a restart.
  ledger_.acknowledge(d.parent_id, d.delivery_id);
  auto complete = [this, &d] {
    for (const auto& problem : queue_.complete_delivery(d.delivery_id))
      spdlog::warn("delivery {} acknowledged but not removed from the queue (sent again after a restart): {}",
                   d.delivery_id, problem);
  };
  {
    const in_flight::scope counted(queue_changes_);  // daemon/status waits for it, however it ends
    co_await offload(pool_, complete);
  }
  spdlog::info("delivery {} to '{}' acknowledged ({} results)", d.delivery_id, d.parent_id, d.seqs.size());
  co_return true;
}

}  // namespace handoff::daemon
