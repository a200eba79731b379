// Auto-delivery: when a parent is idle and results are pending, ask its endpoint for context
// usage, project one batch under the auto-delivery caps, record it durably, send parent/deliver,
// and drop the results only when the client acknowledged it. Unacknowledged deliveries are
// resent unchanged (same deliveryId) whenever the parent's endpoint comes back.
#include <algorithm>
#include <chrono>
#include <random>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "offload.hpp"
#include "service.hpp"

namespace handoff::daemon {
namespace {

constexpr auto as_tuple = asio::experimental::as_tuple(asio::use_awaitable);

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

void service::schedule_flush(const std::string& parent_id, bool immediately) {
  if (ledger_.find(parent_id) == nullptr || stopping_) return;
  flush_state& f = flush_states_[parent_id];
  if (f.scheduled) return;
  f.scheduled = true;
  auto delay = std::chrono::milliseconds(immediately ? 0 : cfg_.flush_delay_ms);
  asio::co_spawn(io_, delayed_flush(parent_id, delay),
                 [](std::exception_ptr e) { log_failure(e, "auto-delivery failed"); });
}

asio::awaitable<void> service::delayed_flush(std::string parent_param, std::chrono::milliseconds delay) {
  const std::string parent_id = std::move(parent_param);
  if (delay.count() > 0) {
    asio::steady_timer t(io_, delay);
    co_await t.async_wait(as_tuple);
  }
  flush_states_[parent_id].scheduled = false;
  co_await flush(parent_id);
}

void service::flush_ended(const std::string& parent_id) {
  auto it = flush_states_.find(parent_id);
  if (it == flush_states_.end()) return;
  flush_state& f = it->second;
  f.running = false;
  if (f.again) {
    f.again = false;
    schedule_flush(parent_id, true);
  }
  if (!f.scheduled && !f.running) flush_states_.erase(parent_id);
}

asio::awaitable<void> service::flush(std::string parent_param) {
  const std::string parent_id = std::move(parent_param);
  auto endpoint = endpoint_of(parent_id);
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
  // (main keeps the service alive until then; schedule_flush does nothing once stopping).
  struct end_flush {
    service* s;
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

asio::awaitable<bool> service::deliver_next_batch(std::shared_ptr<connection> endpoint_param, std::string parent_param) {
  const std::shared_ptr<connection> endpoint = std::move(endpoint_param);
  const std::string parent_id = std::move(parent_param);
  const parent* p = ledger_.find(parent_id);
  if (p == nullptr || !p->idle || stopping_ || !endpoint->is_open()) co_return false;
  reservation taken = ledger_.reserve_deliverable(parent_id);
  if (taken.empty()) co_return false;

  batch_options options = options_for(cfg_.auto_caps);
  options.usage = co_await ask_usage(endpoint, parent_id);
  const std::vector<held_result> held = taken.held();
  // Whatever fails from here on drops `taken`, which gives the results back.
  const built_batch built = co_await build(held, options);
  taken.keep_only(built.admitted_seqs);
  rpc::deliver_params params;
  params.parent_id = parent_id;
  params.delivery_id = new_delivery_id(++delivery_counter_);
  params.batch = to_wire(built.b);
  const stored_delivery d{parent_id, params.delivery_id, built.admitted_seqs, rpc::encode(params).dump()};
  auto record = [this, &d] { queue_.begin_delivery(d); };
  co_await offload(pool_, record);
  ledger_.begin_delivery(std::move(taken), d);
  spdlog::info("delivery {} to '{}': {} results, {} deferred, {} budget", d.delivery_id, parent_id,
               d.seqs.size(), built.b.deferred.size(), built.b.budget.dynamic ? "dynamic" : "static");
  co_return co_await send_delivery(endpoint, d);
}

asio::awaitable<bool> service::send_delivery(std::shared_ptr<connection> endpoint_param, stored_delivery delivery) {
  const std::shared_ptr<connection> endpoint = std::move(endpoint_param);
  const stored_delivery d = std::move(delivery);
  auto params = nlohmann::json::parse(d.payload);
  auto outcome = co_await endpoint->call("parent/deliver", params, std::chrono::milliseconds(cfg_.deliver_timeout_ms));
  if (!outcome.ok()) {
    spdlog::info("delivery {} to '{}' not acknowledged ({}); it stays queued", d.delivery_id, d.parent_id,
                 outcome.error);
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

asio::awaitable<std::optional<context_usage>> service::ask_usage(const std::shared_ptr<connection>& endpoint,
                                                                const std::string& parent_id) {
  const nlohmann::json params = rpc::encode(rpc::usage_request_params{parent_id});
  auto outcome = co_await endpoint->call("context/usage", params, std::chrono::milliseconds(cfg_.usage_timeout_ms));
  if (!outcome.ok() || outcome.result.is_null()) {
    if (!outcome.ok()) spdlog::debug("context/usage for '{}': {}", parent_id, outcome.error);
    co_return std::nullopt;
  }
  try {
    auto u = rpc::decode_usage(outcome.result);
    co_return context_usage{u.tokens, u.context_window, u.percent};
  } catch (const std::exception& e) {
    spdlog::warn("context/usage for '{}' answered nonsense ({}); using static caps", parent_id, e.what());
    co_return std::nullopt;
  }
}

void service::note_artifact_copied(const artifact_ref& artifact) {
  if (!artifact_copy_noted_.exchange(true))
    spdlog::info("artifact {} written as a copy, not linked from the queue: {} (further copies are logged at debug "
                 "level)",
                 artifact.sha256, artifact.link_error);
  else
    spdlog::debug("artifact {} written as a copy, not linked from the queue: {}", artifact.sha256, artifact.link_error);
}

batch_options service::options_for(const surface_caps& caps) const {
  batch_options options;
  options.caps = caps;
  options.head_share = cfg_.head_share;
  options.policy = cfg_.policy;
  options.reader = cfg_.cli_path;
  return options;
}

asio::awaitable<service::built_batch> service::build(std::vector<held_result> results_param,
                                                      batch_options options_param,
                                                      std::vector<held_result> companions_param) {
  // Parameters copied into locals before any lambda touches them (see offload.hpp).
  const std::vector<held_result> results = std::move(results_param);
  const std::vector<held_result> companions = std::move(companions_param);
  const batch_options options = options_param;
  auto work = [this, &results, &companions, &options] {
    // One list in completion order: the results to project and the companions beside them.
    struct entry {
      const held_result* result;
      bool companion;
    };
    std::vector<entry> order;
    order.reserve(results.size() + companions.size());
    for (const auto& r : results) order.push_back({&r, false});
    for (const auto& r : companions) order.push_back({&r, true});
    std::stable_sort(order.begin(), order.end(), [](const entry& a, const entry& b) { return a.result->seq < b.result->seq; });
    std::vector<mapped_file> texts;
    std::vector<batch_input> inputs;
    texts.reserve(results.size());
    inputs.reserve(order.size());
    for (const auto& [r, companion] : order) {
      if (companion) {
        batch_input in{r->info.child_id, r->info.title, r->info.status, r->info.error, {}, r->sha256, std::nullopt, r->shape};
        in.companion = true;
        inputs.push_back(std::move(in));
        continue;
      }
      texts.push_back(queue_.open_text(*r));
      inputs.push_back(batch_input{r->info.child_id, r->info.title, r->info.status, r->info.error,
                                   texts.back().view(), r->sha256, queue_.linkable_text(*r), r->shape});  // a large text's artifact links the queue's file
    }
    built_batch out{build_batch(inputs, options, &store_), {}};
    for (const auto& s : out.b.sections) {
      out.admitted_seqs.push_back(order[s.input_index].result->seq);
      if (s.artifact && !s.artifact->link_error.empty()) note_artifact_copied(*s.artifact);
    }
    return out;
  };
  co_return co_await offload(pool_, work);
}

}  // namespace handoff::daemon
