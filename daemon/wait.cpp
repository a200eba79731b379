// subagent/wait: block until every listed child has completed (or the timeout), then return
// their results as one projected batch under the wait caps. The results are consumed only
// once the reply was written to the client.
#include <algorithm>

#include <asio/post.hpp>
#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <spdlog/spdlog.h>

#include "offload.hpp"
#include "service.hpp"

namespace handoff::daemon {

using rpc::errc;
using rpc::rpc_error;

namespace {

constexpr auto as_tuple = asio::experimental::as_tuple(asio::use_awaitable);

// Every listed child has an outcome, and none is on its way to another client (a reserved
// result may come back if that client vanishes before reading it).
bool settled(const parent& p, const std::vector<std::string>& ids) {
  return std::all_of(ids.begin(), ids.end(), [&](const std::string& id) {
    auto it = p.children.find(id);
    if (it == p.children.end()) return true;
    const child& c = it->second;
    return c.state != child_state::running && !(c.state == child_state::completed && c.reserved);
  });
}

std::optional<context_usage> from_wire(const std::optional<rpc::usage_dto>& u) {
  if (!u) return std::nullopt;
  return context_usage{u->tokens, u->context_window, u->percent};
}

}  // namespace

asio::awaitable<reply> service::wait(std::shared_ptr<connection> conn, rpc::wait_params p) {
  parent& par = require_parent(p.parent_id);
  std::vector<std::string> unknown;
  for (const auto& id : p.child_ids)
    if (!par.children.contains(id)) unknown.push_back(id);
  if (!unknown.empty()) {
    std::string list;
    for (const auto& id : unknown) list += (list.empty() ? "'" : ", '") + id + "'";
    throw rpc_error(errc::unknown_child, "unknown child " + list + " of parent '" + p.parent_id + "'",
                    nlohmann::json{{"childIds", unknown}});
  }

  // Sleep until the children settle, the deadline passes, the client leaves or we stop.
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  const auto deadline = p.timeout_ms ? std::chrono::steady_clock::now() + std::chrono::milliseconds(*p.timeout_ms)
                                     : std::chrono::steady_clock::time_point::max();
  waiter self{p.child_ids, [&timer] { timer.cancel(); }};
  const std::string parent_id = p.parent_id;
  registry_.find(parent_id)->waiters.push_back(&self);
  bool timed_out = false;
  for (;;) {
    parent* current = registry_.find(parent_id);
    if (stopping_ || !conn->is_open() || current == nullptr) break;
    if (settled(*current, p.child_ids)) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      break;
    }
    timer.expires_at(deadline);
    co_await timer.async_wait(as_tuple);
  }
  parent& after = *registry_.find(parent_id);
  std::erase(after.waiters, &self);
  if (stopping_) throw rpc_error(errc::shutting_down, "handoffd is shutting down; the results stay queued");
  if (!conn->is_open()) co_return reply{};  // nobody to answer; results stay pending

  // Take the completed ones, in completion order.
  std::vector<child*> taken;
  rpc::wait_result result;
  result.timed_out = timed_out;
  for (const auto& id : p.child_ids) {
    child& c = after.children.at(id);
    switch (c.state) {
      case child_state::running: result.pending.push_back(id); break;
      case child_state::completed:
        // Reserved: on its way to another client; if that fails it comes back, so still pending.
        if (c.reserved) result.pending.push_back(id);
        else taken.push_back(&c);
        break;
      case child_state::delivering:
      case child_state::delivered: result.already_delivered.push_back(id); break;
      case child_state::cancelled: result.cancelled.push_back(id); break;
    }
  }
  std::sort(taken.begin(), taken.end(), [](const child* a, const child* b) { return a->held->seq < b->held->seq; });
  std::vector<held_result> held;
  for (child* c : taken) {
    c->reserved = true;
    held.push_back(*c->held);
  }

  batch_options options;
  options.caps = cfg_.wait_caps;
  options.head_share = cfg_.head_share;
  options.policy = cfg_.policy;
  options.usage = from_wire(p.usage);
  if (!options.usage && !held.empty())
    if (auto endpoint = after.endpoint.lock(); endpoint && endpoint != conn)
      options.usage = co_await ask_usage(endpoint, parent_id);

  built_batch built;
  try {
    built = co_await build(std::move(held), options);
  } catch (...) {
    for (const auto& id : p.child_ids)
      if (child* c = registry_.find_child(parent_id, id)) c->reserved = false;
    wake_waiters(*registry_.find(parent_id));
    throw;
  }
  // Deferred results go back to the pending pool; admitted ones stay reserved until written.
  std::vector<std::uint64_t> admitted = built.admitted_seqs;
  for (const auto& id : p.child_ids) {
    child* c = registry_.find_child(parent_id, id);
    if (c != nullptr && c->reserved && c->held &&
        std::find(admitted.begin(), admitted.end(), c->held->seq) == admitted.end())
      c->reserved = false;
  }
  wake_waiters(*registry_.find(parent_id));
  result.batch = to_wire(built.b);

  reply r;
  r.result = rpc::encode(result);
  r.on_written = [this, parent_id, admitted](bool written) {
    parent* pr = registry_.find(parent_id);
    if (pr == nullptr) return;
    if (!written) {
      // The client never got it: the results are still ours to deliver.
      for (auto& [id, c] : pr->children)
        if (c.reserved && c.held && std::find(admitted.begin(), admitted.end(), c.held->seq) != admitted.end())
          c.reserved = false;
      wake_waiters(*pr);
      if (pr->idle) schedule_flush(parent_id);
      return;
    }
    mark_delivered(*pr, admitted);
    ++queue_changes_in_flight_;
    asio::post(pool_, [this, admitted] {
      try {
        // What the disk refused stays on disk and is delivered again after a restart: say so.
        for (const auto& problem : queue_.consume(admitted))
          spdlog::warn("consumed results not removed from the queue: {}", problem);
      } catch (const std::exception& e) {
        spdlog::error("could not remove consumed results from the queue: {}", e.what());
      }
      asio::post(io_, [this] { --queue_changes_in_flight_; });
    });
  };
  co_return r;
}

void service::mark_delivered(parent& p, const std::vector<std::uint64_t>& seqs) {
  for (auto& [id, c] : p.children) {
    if (!c.held || std::find(seqs.begin(), seqs.end(), c.held->seq) == seqs.end()) continue;
    c.state = child_state::delivered;
    c.reserved = false;
    c.delivery_id.clear();
    c.held.reset();
  }
}

}  // namespace handoff::daemon
