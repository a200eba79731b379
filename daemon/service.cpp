#include "service.hpp"

#include <algorithm>
#include <utility>

#include <asio/experimental/as_tuple.hpp>
#include <asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "engine/sha256.hpp"
#include "engine/text_page.hpp"
#include "offload.hpp"
#include "preview.hpp"
#include "store_hygiene.hpp"
#include "version.hpp"

namespace handoff::daemon {

using nlohmann::json;
using rpc::errc;
using rpc::rpc_error;

namespace {
constexpr auto as_tuple = asio::experimental::as_tuple(asio::use_awaitable);
}  // namespace

template <class Params, class Handler>
void service::bind(std::string method, Params (*decode)(const json&, const rpc::wire_limits&), Handler h) {
  methods_.emplace(std::move(method), [this, decode, h](std::shared_ptr<connection> conn,
                                                        const json& params) -> asio::awaitable<reply> {
    // Decoded into a named local first: g++ 12 mishandles a prvalue argument inside co_await.
    Params typed = decode(params, cfg_.wire);
    co_return co_await (this->*h)(std::move(conn), std::move(typed));
  });
}

service::service(const config& cfg, asio::io_context& io, asio::thread_pool& pool, artifact_store& store,
                 pending_queue& queue)
    : cfg_(cfg), io_(io), pool_(pool), store_(store), queue_(queue) {
  // The method table, in one place (docs/protocol.md §6-7; docs/design.md §11).
  bind("initialize", &rpc::decode_initialize, &service::initialize);
  bind("subagent/started", &rpc::decode_started, &service::started);
  bind("subagent/progress", &rpc::decode_progress, &service::progress);
  bind("subagent/completed", &rpc::decode_completed, &service::completed);
  bind("subagent/check", &rpc::decode_check, &service::check);
  bind("subagent/wait", &rpc::decode_wait, &service::wait);
  bind("subagent/cancel", &rpc::decode_cancel, &service::cancel);
  bind("parent/state", &rpc::decode_parent_state, &service::parent_state);
  bind("artifact/read", &rpc::decode_artifact_read, &service::artifact_read);
  methods_.emplace("daemon/status", [this](std::shared_ptr<connection> conn, const json& params) {
    return status(std::move(conn), params);
  });
  methods_.emplace("daemon/gc", [this](std::shared_ptr<connection> conn, const json& params) {
    return gc(std::move(conn), params);
  });
}

asio::awaitable<void> service::on_message(std::shared_ptr<connection> conn_param, rpc::message msg_param) {
  // Locals, not parameters, are what the lambdas below capture (see offload.hpp).
  const std::shared_ptr<connection> conn = std::move(conn_param);
  const rpc::message msg = std::move(msg_param);
  const bool notification = msg.type == rpc::message::kind::notification;
  auto answer_error = [&](errc code, const std::string& text, const json& data = nullptr) {
    if (notification) {
      spdlog::debug("connection {}: notification {} failed: {}", conn->id(), msg.method, text);
      return;
    }
    conn->send(rpc::make_error(msg.id, code, text, data));
  };
  auto it = methods_.find(msg.method);
  if (it == methods_.end()) {
    answer_error(errc::method_not_found, "unknown method '" + msg.method + "'");
    co_return;
  }
  if (stopping_) {
    answer_error(errc::shutting_down, "handoffd is shutting down; retry once it is back");
    co_return;
  }
  // Exactly one reply per request: every path below sends one (notifications get none).
  reply r;
  try {
    r = co_await it->second(conn, msg.params);
  } catch (const rpc_error& e) {
    answer_error(e.code, e.what(), e.data);
    co_return;
  } catch (const std::exception& e) {
    spdlog::error("connection {}: {} failed unexpectedly: {}", conn->id(), msg.method, e.what());
    answer_error(errc::internal_error, std::string("internal error: ") + e.what());
    co_return;
  }
  if (notification) co_return;
  conn->send(rpc::make_response(msg.id, r.result), std::move(r.on_written));
}

void service::on_closed(const std::shared_ptr<connection>& conn) {
  --connections_;
  for (auto& [pid, p] : registry_.parents_mutable()) {
    if (p.endpoint.lock() == conn || p.endpoint.expired()) p.endpoint.reset();
    wake_waiters(p);
  }
}

void service::on_input_closed(const std::shared_ptr<connection>&) {
  // Nothing to do: a half-closed client (`socat`, `nc -U`) still gets every reply, waits
  // included; the connection closes once they are written.
}

parent& service::require_parent(const std::string& parent_id) {
  parent* p = registry_.find(parent_id);
  if (p == nullptr) throw rpc_error(errc::unknown_parent, "unknown parent '" + parent_id + "'");
  return *p;
}

void service::wake_waiters(parent& p) {
  // Copy: a woken waiter may deregister itself before we are done.
  auto waiters = p.waiters;
  for (waiter* w : waiters) w->wake();
}

asio::awaitable<reply> service::initialize(std::shared_ptr<connection> conn, rpc::initialize_params p) {
  if (p.protocol_version != rpc::protocol_version)
    throw rpc_error(errc::invalid_params, "protocolVersion: this daemon speaks \"" +
                                              std::string(rpc::protocol_version) + "\", not \"" +
                                              p.protocol_version + "\"");
  rpc::initialize_result result;
  result.protocol_version = rpc::protocol_version;
  result.server_version = handoff_version;
  result.artifact_dir = store_.dir().string();
  result.limits = limits_json(cfg_);
  reply r;
  if (p.parent_id) {
    parent& par = registry_.get_or_create(*p.parent_id);
    par.endpoint = conn;
    conn->set_parent_id(*p.parent_id);
    result.parent_id = p.parent_id;
    spdlog::info("connection {}: parent endpoint for '{}' ({})", conn->id(), *p.parent_id, p.client_name);
    // Once the client has our answer, resend what it never acknowledged, then flush if idle.
    const std::string parent_id = *p.parent_id;
    r.on_written = [this, parent_id](bool written) {
      if (written) schedule_flush(parent_id, true);
    };
  }
  r.result = rpc::encode(result);
  co_return r;
}

asio::awaitable<reply> service::started(std::shared_ptr<connection>, rpc::started_params p) {
  parent& par = registry_.get_or_create(p.parent_id);
  auto [it, inserted] = par.children.try_emplace(p.child_id);
  child& c = it->second;
  if (inserted) {
    c.id = p.child_id;
    c.title = p.title;
  } else if (c.title.empty()) {
    c.title = p.title;
  }
  co_return reply{rpc::encode(rpc::started_result{std::string(to_string(c.state))}), {}};
}

asio::awaitable<reply> service::progress(std::shared_ptr<connection>, rpc::progress_params p) {
  parent& par = registry_.get_or_create(p.parent_id);
  auto [it, inserted] = par.children.try_emplace(p.child_id);
  if (inserted) it->second.id = p.child_id;
  append_progress(it->second.progress, p.text);
  co_return reply{};
}

asio::awaitable<reply> service::completed(std::shared_ptr<connection>, rpc::completed_params p) {
  auto status = parse_result_status(p.status);
  if (!status) throw rpc_error(errc::invalid_params, "status: expected done, error or cancelled");
  completion info{p.parent_id, p.child_id, p.title, *status, p.error};
  const std::string text = std::move(p.final_text);
  if (info.title.empty())
    if (child* known = registry_.find_child(p.parent_id, p.child_id)) info.title = known->title;

  // Known from now on, so a wait pipelined right behind this request waits for it rather than
  // failing with "unknown child" while the text is being written.
  {
    parent& par = registry_.get_or_create(p.parent_id);
    auto [it, inserted] = par.children.try_emplace(p.child_id);
    if (inserted) {
      it->second.id = p.child_id;
      it->second.title = p.title;
    }
  }
  pending_queue::put_outcome outcome;
  try {
    auto work = [this, &info, &text] { return queue_.put(info, text); };
    outcome = co_await offload(pool_, work);
  } catch (const queue_conflict& e) {
    throw rpc_error(errc::conflict, e.what());
  } catch (const queue_error& e) {
    spdlog::error("queue write failed for {}/{}: {}", p.parent_id, p.child_id, e.what());
    throw rpc_error(errc::storage_failed, std::string("not saved, not acknowledged: ") + e.what());
  }

  parent& par = registry_.get_or_create(p.parent_id);
  auto [it, inserted] = par.children.try_emplace(p.child_id);
  child& c = it->second;
  if (inserted) c.id = p.child_id;
  if (c.title.empty()) c.title = outcome.held.info.title;
  if (outcome.delivered) {
    // A resend of a result that already left the queue: it stays delivered.
    if (c.state == child_state::running) {
      c.state = child_state::delivered;
      c.final_status = outcome.held.info.status;
      c.final_bytes = outcome.held.shape.bytes;
      c.final_lines = outcome.held.shape.lines;
      wake_waiters(par);
    }
  } else if (!outcome.duplicate || c.state == child_state::running) {
    if (c.state == child_state::cancelled) {
      // Nobody wants it any more: consume it right away (it stays a tombstone for resends).
      const std::uint64_t seq = outcome.held.seq;
      auto consume = [this, seq] {
        for (const auto& problem : queue_.consume({seq}))
          spdlog::warn("a cancelled child's result was not removed from the queue: {}", problem);
      };
      co_await offload(pool_, consume);
    } else if (c.state == child_state::running || !c.held) {
      c.state = child_state::completed;
      c.held = outcome.held;
      c.final_status = outcome.held.info.status;
      c.final_bytes = outcome.held.shape.bytes;
      c.final_lines = outcome.held.shape.lines;
      wake_waiters(par);
      if (par.idle) schedule_flush(par.id);
    }
  }
  rpc::completed_result result{outcome.duplicate, outcome.held.sha256, outcome.held.shape.bytes,
                               outcome.held.shape.lines};
  co_return reply{rpc::encode(result), {}};
}

asio::awaitable<reply> service::check(std::shared_ptr<connection>, rpc::check_params p) {
  parent& par = require_parent(p.parent_id);
  auto it = par.children.find(p.child_id);
  if (it == par.children.end())
    throw rpc_error(errc::unknown_child, "unknown child '" + p.child_id + "' of parent '" + p.parent_id + "'");
  child& c = it->second;
  rpc::check_result result;
  result.child_id = c.id;
  result.title = c.title;
  result.state = std::string(to_string(c.state));
  if (c.final_status) {
    result.status = std::string(to_string(*c.final_status));
    result.bytes = c.final_bytes;
    result.lines = c.final_lines;
  }
  preview pv;
  if (c.held) {
    result.error = c.held->info.error;
    const held_result held = *c.held;
    auto read_tail = [this, &held] { return make_preview(queue_.open_text(held).view()); };
    pv = co_await offload(pool_, read_tail);
  } else {
    pv = make_preview(c.progress);
  }
  result.preview = std::move(pv.text);
  result.preview_truncated = pv.truncated;
  co_return reply{rpc::encode(result), {}};
}

asio::awaitable<reply> service::cancel(std::shared_ptr<connection>, rpc::cancel_params p) {
  parent& par = require_parent(p.parent_id);
  rpc::cancel_result result;
  std::vector<std::uint64_t> consumed;
  for (const auto& id : p.child_ids) {
    auto it = par.children.find(id);
    if (it == par.children.end()) continue;
    child& c = it->second;
    result.cancelled.push_back(id);
    if (c.state == child_state::completed && !c.reserved) consumed.push_back(c.held->seq);
    if (c.state == child_state::running || (c.state == child_state::completed && !c.reserved)) {
      c.state = child_state::cancelled;
      c.held.reset();
    }
  }
  auto consume = [this, &consumed] {
    for (const auto& problem : queue_.consume(consumed))
      spdlog::warn("cancelled results not removed from the queue: {}", problem);
  };
  if (!consumed.empty()) co_await offload(pool_, consume);
  result.consumed = consumed.size();
  wake_waiters(par);
  co_return reply{rpc::encode(result), {}};
}

asio::awaitable<reply> service::parent_state(std::shared_ptr<connection>, rpc::parent_state_params p) {
  parent& par = registry_.get_or_create(p.parent_id);
  par.idle = p.state == "idle";
  if (par.idle) schedule_flush(par.id);
  co_return reply{};
}

asio::awaitable<reply> service::artifact_read(std::shared_ptr<connection>, rpc::artifact_read_params params) {
  const rpc::artifact_read_params p = std::move(params);
  auto read = [this, &p]() -> std::optional<rpc::artifact_read_result> {
    auto file = store_.open(p.sha256);
    if (!file) return std::nullopt;
    page_request request{p.offset, p.limit};
    text_page page;
    try {
      page = read_page(file->view(), request);
    } catch (const std::out_of_range& e) {
      throw rpc_error(errc::invalid_params, std::string("offset: ") + e.what());
    }
    rpc::artifact_read_result r;
    r.path = store_.path_of(p.sha256).string();
    r.text = std::move(page.text);
    r.first_line = page.first_line;
    r.last_line = page.last_line;
    r.total_lines = page.total_lines;
    r.cut = page.cut;
    r.next_offset = page.next_offset;
    return r;
  };
  auto result = co_await offload(pool_, read);
  if (!result) throw rpc_error(errc::not_found, "no artifact " + p.sha256 + " in " + store_.dir().string());
  co_return reply{rpc::encode(*result), {}};
}

asio::awaitable<reply> service::status(std::shared_ptr<connection>, const json&) {
  // A status asked after a reply shows that reply's effect on the queue: removals a wait's
  // answer started on the pool finish first (bounded; they are one fsync per result).
  if (queue_changes_in_flight_ > 0) {
    asio::steady_timer tick(io_);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (queue_changes_in_flight_ > 0 && std::chrono::steady_clock::now() < give_up) {
      tick.expires_after(std::chrono::milliseconds(1));
      co_await tick.async_wait(as_tuple);
    }
  }
  auto counts = registry_.count();
  const auto disk = queue_.statistics();  // a snapshot taken as the last change ended
  // Listing the store takes the pool (two thread hand-offs, more than the work itself on a busy
  // machine: bench/e2e_latency.cpp); a listing the directory has not changed since is reused.
  json store;
  if (auto cached = store_listing_.reuse(store_.dir())) {
    store = std::move(*cached);
  } else {
    const auto listed_at = store_listing::now();
    auto list = [this] { return store_status(store_.dir()); };
    store = co_await offload(pool_, list);
    store_listing_.keep(store_.dir(), store, listed_at);
  }
  auto uptime = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_at_);
  json result = {
      {"version", handoff_version},
      {"uptimeMs", uptime.count()},
      {"connections", connections_},
      {"parents", counts.parents},
      {"children", {{"running", counts.running}, {"completed", counts.completed},
                    {"delivering", counts.delivering}, {"delivered", counts.delivered}}},
      {"queue", {{"dir", queue_.dir().string()}, {"results", disk.results}, {"textBytes", disk.text_bytes},
                 {"deliveries", disk.deliveries}, {"tombstones", disk.tombstones}}},
      {"store", std::move(store)},
  };
  co_return reply{std::move(result), {}};
}

}  // namespace handoff::daemon
