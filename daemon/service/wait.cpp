// subagent/wait: block until every listed child has completed (or the timeout), then return
// their results as one projected batch under the wait caps. The results are consumed only
// once the reply was written to the client; until then the wait's reservation holds them, and
// dropping it (a failed build, a reply never written) gives them back.
#include <algorithm>
#include <iterator>

#include <asio/use_awaitable.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>

#include "engine/fs/sha256.hpp"
#include "runtime/as_tuple.hpp"
#include "parent_calls.hpp"
#include "service.hpp"

namespace handoff::daemon {

using nlohmann::json;
using rpc::errc;
using rpc::rpc_error;

// The wire's reader names and the profiles the batches are built with are the same list.
constexpr bool readers_match() {
  if (std::size(rpc::reader_names) != std::size(reader_profiles)) return false;
  for (std::size_t i = 0; i < std::size(rpc::reader_names); ++i)
    if (rpc::reader_names[i] != reader_profiles[i]->name) return false;
  return true;
}
static_assert(readers_match(), "protocol/messages.hpp's reader_names and reader_profiles differ");

namespace {


std::optional<context_usage> from_wire(const std::optional<rpc::usage_dto>& u) {
  if (!u) return std::nullopt;
  return context_usage{u->tokens, u->context_window, u->percent};
}

// batchWith without the wait's own children: the siblings whose results share its budget.
std::vector<std::string> siblings_of(const rpc::wait_params& p) {
  std::vector<std::string> out;
  for (const auto& id : p.batch_with)
    if (std::find(p.child_ids.begin(), p.child_ids.end(), id) == p.child_ids.end()) out.push_back(id);
  return out;
}

std::string quoted_list(const std::vector<std::string>& ids) {
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "'" : ", '") + id + "'";
  return list;
}

}  // namespace

asio::awaitable<void> service::require_known(const std::string& parent_id, const std::vector<std::string>& child_ids) {
  // Ids the ledger does not know are either forgotten (the queue's tombstone remembers their
  // delivery) or were never known: those are an error.
  std::vector<std::string> unknown;
  for (const auto& id : child_ids) {
    if (ledger_.find_child(parent_id, id) != nullptr) continue;
    const bool forgotten = co_await delivered_before(parent_id, id);
    if (!forgotten) unknown.push_back(id);
  }
  if (unknown.empty()) co_return;
  if (ledger_.find(parent_id) == nullptr) throw rpc_error(errc::unknown_parent, "unknown parent '" + parent_id + "'");
  throw rpc_error(errc::unknown_child, "unknown child " + quoted_list(unknown) + " of parent '" + parent_id + "'",
                  nlohmann::json{{"childIds", unknown}});
}

asio::awaitable<bool> service::sleep_until_settled(const std::shared_ptr<connection>& conn, const rpc::wait_params& p,
                                                   const std::vector<std::string>& siblings, const json& request_id) {
  // Sleep until the children settle, the deadline passes, the client leaves or cancels, or we
  // stop. A cancelled wait has taken nothing: its results stay pending (auto-delivery).
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor);
  const auto deadline = p.timeout_ms ? std::chrono::steady_clock::now() + std::chrono::milliseconds(*p.timeout_ms)
                                     : std::chrono::steady_clock::time_point::max();
  std::vector<std::string> watched = p.child_ids;
  watched.insert(watched.end(), siblings.begin(), siblings.end());
  const watch self = ledger_.watch_children(p.parent_id, watched, [&timer] { timer.cancel(); });
  bool cancelled = false;
  const auto cancellable = conn->on_cancel(request_id, [&] {
    cancelled = true;
    timer.cancel();
  });
  for (;;) {
    if (cancelled)
      throw rpc_error(errc::request_cancelled, std::string(rpc::methods::subagent_wait.name) +
                                                   " was cancelled by the client; nothing was taken, "
                                                   "its results stay pending");
    if (stopping_ || !conn->is_open()) co_return false;
    if (ledger_.settled(p.parent_id, p.child_ids) && !ledger_.any_running(p.parent_id, siblings)) co_return false;
    if (std::chrono::steady_clock::now() >= deadline) co_return true;
    timer.expires_at(deadline);
    co_await timer.async_wait(as_tuple);
  }
}

asio::awaitable<reply<rpc::wait_result>> service::wait(caller from, rpc::wait_params params) {
  const rpc::wait_params p = std::move(params);
  const std::shared_ptr<connection> conn = std::move(from.conn);
  const json request_id = std::move(from.id);  // what $/cancelRequest names
  const std::vector<std::string> siblings = siblings_of(p);
  co_await require_known(p.parent_id, p.child_ids);
  co_await require_known(p.parent_id, siblings);
  const bool timed_out = co_await sleep_until_settled(conn, p, siblings, request_id);
  if (stopping_) throw rpc_error(errc::shutting_down, "handoffd is shutting down; the results stay queued");
  if (!conn->is_open()) co_return reply<rpc::wait_result>{};  // nobody to answer; results stay pending

  // Take the completed ones (completion order); the others are where the ledger says.
  reservation taken = ledger_.reserve(p.parent_id, p.child_ids);
  if (p.with_ready) taken.absorb(ledger_.reserve_deliverable(p.parent_id));
  wait_outcome where = ledger_.outcome_of(p.parent_id, p.child_ids, taken);
  reply<rpc::wait_result> r;
  rpc::wait_result& result = r.result;
  result.timed_out = timed_out;
  result.pending = std::move(where.pending);
  result.already_delivered = std::move(where.already_delivered);
  result.cancelled = std::move(where.cancelled);
  result.forgotten = std::move(where.forgotten);

  batch_options options = batches_.options_for(cfg_.wait_caps);
  options.profile = find_reader_profile(p.reader);  // the decoder admits known names only
  if (p.max_bytes) {
    const auto most = static_cast<std::size_t>(*p.max_bytes);
    options.caps.per_batch_bytes = std::min(options.caps.per_batch_bytes, most);
    options.caps.per_result_bytes = std::min(options.caps.per_result_bytes, most);
    options.caps.floor_bytes = std::min(options.caps.floor_bytes, options.caps.per_result_bytes);
  }
  options.usage = from_wire(p.usage);
  // The cut results' artifacts are written and linked before the answer, so a crash of the
  // daemon cannot leave one partial, but synced after it (on_wait_written), before the results
  // leave the queue: until then the journal holds each text, and recovery mends an artifact a
  // power loss cut short (docs/design.md §7). Their sync was most of a 37 KiB wait.
  options.artifacts = when_synced::by_caller;
  if (!options.usage && !taken.empty())
    if (auto endpoint = endpoint_of(p.parent_id); endpoint && endpoint != conn)
      options.usage = co_await ask_usage(endpoint, p.parent_id, std::chrono::milliseconds(cfg_.usage_timeout_ms));
  const std::vector<held_result> held = taken.held();
  // On failure `taken` gives them back.
  std::optional<in_flight::scope> building(pool_answers_);
  const batch_builder::built_batch built = co_await batches_.build(held, options, companions_of(p.parent_id, siblings));
  building.reset();
  // Deferred results go back to the pool; admitted ones stay reserved until written.
  taken.keep_only(built.admitted_seqs);
  result.batch = to_wire(built.b);

  // std::function needs a copyable callable: the move-only reservation rides in a shared_ptr.
  auto kept = std::make_shared<reservation>(std::move(taken));
  std::vector<std::string> artifacts;
  for (const auto& s : built.b.sections)
    if (s.artifact && s.artifact->saved) artifacts.push_back(s.artifact->sha256);
  r.on_written = [this, kept, artifacts = std::move(artifacts)](bool written) mutable {
    on_wait_written(*kept, written, std::move(artifacts));
  };
  co_return r;
}

std::vector<held_result> service::companions_of(const std::string& parent_id,
                                                const std::vector<std::string>& siblings) const {
  // What the ledger keeps of each sibling's result once it completed, whether still held or
  // already taken by its own wait: the same for every wait of the set. A sibling still running
  // (the wait timed out), cancelled or forgotten shares nothing.
  std::vector<held_result> out;
  for (const auto& id : siblings) {
    const child* c = ledger_.find_child(parent_id, id);
    if (c == nullptr || !c->final_status || c->state == child_state::cancelled || c->state == child_state::running)
      continue;
    held_result h;
    h.seq = c->final_seq;
    h.info = completion{parent_id, id, c->title, *c->final_status, c->final_error};
    h.sha256 = sha256_placeholder();  // the path a footer would name, by its length
    h.shape = text_shape{c->final_bytes, c->final_lines};
    out.push_back(std::move(h));
  }
  return out;
}

void service::on_wait_written(reservation& taken, bool written, std::vector<std::string> artifacts) {
  const std::string parent_id = taken.parent_id();
  if (!written) {
    // The client never got it: the results are still ours to deliver.
    taken.release();
    if (const parent* p = ledger_.find(parent_id); p != nullptr && p->idle) deliveries_.schedule(parent_id);
    return;
  }
  if (taken.empty()) return;
  consume_in_background(ledger_.consume(std::move(taken)), std::move(artifacts));
}

}  // namespace handoff::daemon
