// Auto-delivery: when a parent is idle and results are pending, ask its endpoint for context
// usage, project one batch under the auto-delivery caps, record it durably, send parent/deliver,
// and drop the results only when the client acknowledged it. Unacknowledged deliveries are
// resent unchanged (same deliveryId) whenever the parent's endpoint comes back.
#include <chrono>
#include <random>

#include <asio/co_spawn.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "engine/sha256.hpp"
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
  parent* p = registry_.find(parent_id);
  if (p == nullptr || p->flush_scheduled || stopping_) return;
  p->flush_scheduled = true;
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
  if (parent* pr = registry_.find(parent_id)) pr->flush_scheduled = false;
  co_await flush(parent_id);
}

asio::awaitable<std::optional<context_usage>> service::ask_usage(const std::shared_ptr<connection>& endpoint,
                                                                const std::string& parent_id) {
  // (Built field by field: g++ 12 miscompiles braced json initialisers inside coroutines.)
  nlohmann::json params = nlohmann::json::object();
  params["parentId"] = parent_id;
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

asio::awaitable<service::built_batch> service::build(std::vector<held_result> results_param,
                                                      batch_options options_param) {
  // Parameters copied into locals before any lambda touches them (see offload.hpp).
  const std::vector<held_result> results = std::move(results_param);
  const batch_options options = options_param;
  auto work = [this, &results, &options] {
    std::vector<mapped_file> texts;
    std::vector<batch_input> inputs;
    texts.reserve(results.size());
    inputs.reserve(results.size());
    for (const auto& r : results) {
      texts.push_back(queue_.open_text(r));
      inputs.push_back(batch_input{r.info.child_id, r.info.title, r.info.status, r.info.error,
                                   texts.back().view(), r.sha256});
    }
    built_batch out{build_batch(inputs, options, &store_), {}};
    for (const auto& s : out.b.sections) out.admitted_seqs.push_back(results[s.input_index].seq);
    return out;
  };
  co_return co_await offload(pool_, work);
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
  // Forget the results in memory first, so nothing (a check) reads texts being removed; if the
  // removal fails on disk the delivery is simply made again after a restart.
  if (parent* p = registry_.find(d.parent_id)) {
    mark_delivered(*p, d.seqs);
    std::erase_if(p->unacked, [&](const stored_delivery& u) { return u.delivery_id == d.delivery_id; });
  }
  auto complete = [this, &d] {
    for (const auto& problem : queue_.complete_delivery(d.delivery_id))
      spdlog::warn("delivery {} acknowledged but not removed from the queue (sent again after a restart): {}",
                   d.delivery_id, problem);
  };
  {
    // Counted while it runs (daemon/status waits for it), however the removal ends.
    struct in_flight {
      std::size_t& n;
      explicit in_flight(std::size_t& count) : n(++count) {}
      ~in_flight() { --n; }
    } counted(queue_changes_in_flight_);
    co_await offload(pool_, complete);
  }
  spdlog::info("delivery {} to '{}' acknowledged ({} results)", d.delivery_id, d.parent_id, d.seqs.size());
  co_return true;
}

asio::awaitable<void> service::flush(std::string parent_param) {
  const std::string parent_id = std::move(parent_param);
  parent* p = registry_.find(parent_id);
  if (p == nullptr) co_return;
  if (p->flushing) {
    // The running flush may be bound to an endpoint that is going away (a parent that
    // reconnected right after an acknowledgement) and would end without looking again: once
    // it ends, another flush runs, on whatever endpoint the parent has then.
    p->flush_again = true;
    co_return;
  }
  auto endpoint = p->endpoint.lock();
  if (!endpoint || !endpoint->is_open()) co_return;
  p->flushing = true;
  ++flushes_running_;
  // Runs when the flush ends, or when its frame is destroyed with the io_context at exit
  // (main keeps the service alive until then; schedule_flush does nothing once stopping).
  struct reset_flag {
    service* s;
    std::string id;
    ~reset_flag() {
      --s->flushes_running_;
      parent* pr = s->registry_.find(id);
      if (pr == nullptr) return;
      pr->flushing = false;
      if (!pr->flush_again) return;
      pr->flush_again = false;
      try {
        s->schedule_flush(id, true);
      } catch (const std::exception& e) {
        spdlog::error("could not schedule another auto-delivery for '{}': {}", id, e.what());
      }
    }
  } guard{this, parent_id};

  // 1. Whatever was sent before and never acknowledged goes first, unchanged.
  for (;;) {
    p = registry_.find(parent_id);
    if (p == nullptr || p->unacked.empty()) break;
    if (!co_await send_delivery(endpoint, p->unacked.front())) co_return;
  }

  // 2. New batches while the parent is idle and results wait.
  for (;;) {
    p = registry_.find(parent_id);
    if (p == nullptr || !p->idle || stopping_ || !endpoint->is_open()) co_return;
    auto ready = registry_.deliverable(*p, true);
    if (ready.empty()) co_return;
    std::vector<held_result> held;
    for (child* c : ready) {
      c->reserved = true;
      held.push_back(*c->held);
    }
    auto unreserve = [this, &parent_id, &held] {
      for (const auto& h : held)
        if (child* c = registry_.find_child(parent_id, h.info.child_id)) c->reserved = false;
    };

    batch_options options;
    options.caps = cfg_.auto_caps;
    options.head_share = cfg_.head_share;
    options.policy = cfg_.policy;
    options.usage = co_await ask_usage(endpoint, parent_id);
    built_batch built;
    stored_delivery d;
    try {
      built = co_await build(held, options);
      rpc::deliver_params params;
      params.parent_id = parent_id;
      params.delivery_id = new_delivery_id(++delivery_counter_);
      params.batch = to_wire(built.b);
      d = stored_delivery{parent_id, params.delivery_id, built.admitted_seqs, rpc::encode(params).dump()};
      auto record = [this, &d] { queue_.begin_delivery(d); };
      co_await offload(pool_, record);
    } catch (...) {
      unreserve();
      if (parent* pr = registry_.find(parent_id)) wake_waiters(*pr);
      throw;
    }
    unreserve();
    p = registry_.find(parent_id);
    for (child* c : registry_.deliverable(*p, false)) {
      if (std::find(d.seqs.begin(), d.seqs.end(), c->held->seq) == d.seqs.end()) continue;
      c->state = child_state::delivering;
      c->delivery_id = d.delivery_id;
    }
    p->unacked.push_back(d);
    wake_waiters(*p);
    spdlog::info("delivery {} to '{}': {} results, {} deferred, {} budget", d.delivery_id, parent_id,
                 d.seqs.size(), built.b.deferred.size(), built.b.budget.dynamic ? "dynamic" : "static");
    if (!co_await send_delivery(endpoint, d)) co_return;
  }
}

std::vector<std::string> service::recover() {
  std::vector<std::string> problems;
  auto recovered = queue_.recover(&problems);
  for (auto& r : recovered.results) {
    parent& p = registry_.get_or_create(r.info.parent_id);
    auto [it, inserted] = p.children.try_emplace(r.info.child_id);
    child& c = it->second;
    c.id = r.info.child_id;
    c.title = r.info.title;
    c.state = child_state::completed;
    c.final_status = r.info.status;
    c.final_bytes = r.shape.bytes;
    c.final_lines = r.shape.lines;
    c.held = std::move(r);
  }
  for (auto& d : recovered.deliveries) {
    parent& p = registry_.get_or_create(d.parent_id);
    for (auto& [id, c] : p.children) {
      if (c.held && std::find(d.seqs.begin(), d.seqs.end(), c.held->seq) != d.seqs.end()) {
        c.state = child_state::delivering;
        c.delivery_id = d.delivery_id;
      }
    }
    p.unacked.push_back(std::move(d));
  }
  spdlog::info("recovered {} queued results and {} unacknowledged deliveries", recovered.results.size(),
               recovered.deliveries.size());
  return problems;
}

void service::shutdown() {
  stopping_ = true;
  for (auto& [id, p] : registry_.parents_mutable()) wake_waiters(p);
}

rpc::batch_dto to_wire(const batch& b) {
  rpc::batch_dto out;
  out.text = b.text;
  out.deferred = b.deferred.size();
  const auto& r = b.budget;
  out.budget.mode = r.dynamic ? "dynamic" : "static";
  out.budget.basis = r.basis;
  out.budget.batch_cap_bytes = r.batch_cap_bytes;
  out.budget.static_batch_bytes = r.static_batch_bytes;
  out.budget.per_result_bytes = r.per_result_bytes;
  out.budget.floor_bytes = r.floor_bytes;
  out.budget.max_lines = r.max_lines;
  if (r.usage) out.budget.usage = rpc::usage_dto{r.usage->tokens, r.usage->context_window, r.usage->percent};
  out.budget.headroom_bytes = r.headroom_bytes;
  for (const auto& s : b.sections) {
    rpc::section_dto d;
    d.child_id = s.child_id;
    d.title = s.title;
    d.status = std::string(to_string(s.status));
    d.error = s.error;
    d.text = s.proj.text;
    d.truncated = s.proj.truncated;
    d.total_bytes = s.proj.total.bytes;
    d.total_lines = s.proj.total.lines;
    if (s.proj.truncated) {
      d.omitted_offset = s.proj.omitted_first;
      d.omitted_limit = s.proj.omitted_count;
    }
    if (s.artifact) d.artifact = rpc::artifact_dto{s.artifact->saved, s.artifact->path, s.artifact->sha256, s.artifact->error};
    out.sections.push_back(std::move(d));
  }
  return out;
}

}  // namespace handoff::daemon
