#include "ledger/ledger.hpp"

#include <algorithm>

#include "ledger/preview.hpp"

namespace handoff::daemon {

std::string_view to_string(child_state s) noexcept {
  switch (s) {
    case child_state::running: return "running";
    case child_state::completed: return "completed";
    case child_state::delivering: return "delivering";
    case child_state::delivered: return "delivered";
    case child_state::cancelled: return "cancelled";
  }
  return "unknown";
}

namespace {

bool has_seq(const std::vector<std::uint64_t>& seqs, std::uint64_t seq) {
  return std::find(seqs.begin(), seqs.end(), seq) != seqs.end();
}

void keep_outcome(child& c, const held_result& h) {
  c.final_status = h.info.status;
  c.final_bytes = h.shape.bytes;
  c.final_lines = h.shape.lines;
  c.final_seq = h.seq;
  c.final_error = h.info.error;
}

}  // namespace

ledger::ledger(std::chrono::milliseconds grace, clock_fn now) : grace_(grace), now_(std::move(now)) {}

ledger::~ledger() = default;

const parent* ledger::find(std::string_view parent_id) const {
  auto it = parents_.find(parent_id);
  return it == parents_.end() ? nullptr : &it->second;
}

parent* ledger::find_mutable(std::string_view parent_id) {
  auto it = parents_.find(parent_id);
  return it == parents_.end() ? nullptr : &it->second;
}

const child* ledger::find_child(std::string_view parent_id, std::string_view child_id) const {
  const parent* p = find(parent_id);
  if (p == nullptr) return nullptr;
  auto it = p->children.find(std::string(child_id));
  return it == p->children.end() ? nullptr : &it->second;
}

parent& ledger::get_or_create(const std::string& parent_id) {
  auto [it, inserted] = parents_.try_emplace(parent_id);
  if (inserted) it->second.id = parent_id;
  it->second.changed_at = now_();
  return it->second;
}

child& ledger::child_of(parent& p, const std::string& child_id) {
  auto [it, inserted] = p.children.try_emplace(child_id);
  if (inserted) it->second.id = child_id;
  return it->second;
}

void ledger::settle(child& c, child_state to) {
  c.state = to;
  c.reserved = false;
  c.delivery_id.clear();
  c.held.reset();
  c.settled_at = now_();
}

void ledger::touch(const std::string& parent_id) { get_or_create(parent_id); }

void ledger::attach(const std::string& parent_id, std::weak_ptr<void> endpoint) {
  get_or_create(parent_id).endpoint = std::move(endpoint);
}

void ledger::detach(const void* endpoint) {
  for (auto& [id, p] : parents_) {
    auto current = p.endpoint.lock();
    if (current && current.get() != endpoint) continue;
    // The grace period counts from when the parent hung up, not from its last result.
    if (current) p.changed_at = now_();
    p.endpoint.reset();
  }
  wake_all();
}

bool ledger::set_idle(const std::string& parent_id, bool idle) {
  parent& p = get_or_create(parent_id);
  p.idle = idle;
  return idle;
}

child_state ledger::start(const std::string& parent_id, const std::string& child_id, const std::string& title) {
  child& c = child_of(get_or_create(parent_id), child_id);
  if (c.title.empty()) c.title = title;
  return c.state;
}

void ledger::unstart(const std::string& parent_id, const std::string& child_id) {
  parent* p = find_mutable(parent_id);
  if (p == nullptr) return;
  const auto it = p->children.find(child_id);
  if (it == p->children.end() || it->second.state != child_state::running) return;
  p->children.erase(it);
  wake(parent_id);
}

void ledger::progress(const std::string& parent_id, const std::string& child_id, std::string_view text) {
  append_progress(child_of(get_or_create(parent_id), child_id).progress, text);
}

completion_effect ledger::complete(const pending_queue::put_outcome& outcome) {
  const held_result& h = outcome.held;
  parent& p = get_or_create(h.info.parent_id);
  child& c = child_of(p, h.info.child_id);
  if (c.title.empty()) c.title = h.info.title;
  if (outcome.delivered) {
    // A resend of a result that already left the queue: it stays delivered.
    if (c.state != child_state::running) return completion_effect::unchanged;
    keep_outcome(c, h);
    settle(c, child_state::delivered);
    wake(p.id);
    return completion_effect::already_delivered;
  }
  if (outcome.duplicate && c.state != child_state::running) return completion_effect::unchanged;
  // Nobody wants it any more: consumed right away (its tombstone answers resends).
  if (c.state == child_state::cancelled) return completion_effect::consume_now;
  if (c.state != child_state::running && c.held) return completion_effect::unchanged;
  c.state = child_state::completed;
  c.held = h;
  keep_outcome(c, h);
  wake(p.id);
  return completion_effect::held;
}

reservation ledger::reserve(const std::string& parent_id, const std::vector<std::string>& child_ids) {
  parent* p = find_mutable(parent_id);
  std::vector<held_result> held;
  if (p == nullptr) return {};
  for (const auto& id : child_ids) {
    auto it = p->children.find(id);
    if (it == p->children.end()) continue;
    child& c = it->second;
    if (c.state != child_state::completed || c.reserved) continue;
    c.reserved = true;
    held.push_back(*c.held);
  }
  std::sort(held.begin(), held.end(), [](const held_result& a, const held_result& b) { return a.seq < b.seq; });
  return reservation(this, parent_id, std::move(held));
}

reservation ledger::reserve_deliverable(const std::string& parent_id) {
  parent* p = find_mutable(parent_id);
  if (p == nullptr) return {};
  std::vector<std::string> ids;
  for (const auto& [id, c] : p->children)
    if (c.state == child_state::completed && !c.reserved && !claimed_by_a_wait(parent_id, id)) ids.push_back(id);
  return reserve(parent_id, ids);
}

void ledger::give_back(const std::string& parent_id, const std::vector<held_result>& held) {
  parent* p = find_mutable(parent_id);
  if (p == nullptr) return;
  for (const auto& h : held) {
    auto it = p->children.find(h.info.child_id);
    if (it == p->children.end()) continue;
    child& c = it->second;
    if (c.reserved && c.held && c.held->seq == h.seq) c.reserved = false;
  }
  wake(parent_id);
}

void ledger::begin_delivery(reservation&& r, stored_delivery d) {
  parent* p = find_mutable(r.parent_id_);
  if (p != nullptr) {
    for (const auto& h : r.held_) {
      auto it = p->children.find(h.info.child_id);
      if (it == p->children.end() || !it->second.held || it->second.held->seq != h.seq) continue;
      it->second.state = child_state::delivering;
      it->second.reserved = false;
      it->second.delivery_id = d.delivery_id;
    }
    p->changed_at = now_();
    p->unacked.push_back(std::move(d));
    wake(p->id);
  }
  r.held_.clear();
  r.owner_ = nullptr;
}

bool ledger::acknowledge(const std::string& parent_id, const std::string& delivery_id) {
  parent* p = find_mutable(parent_id);
  if (p == nullptr) return false;
  auto d = std::find_if(p->unacked.begin(), p->unacked.end(),
                        [&](const stored_delivery& u) { return u.delivery_id == delivery_id; });
  if (d == p->unacked.end()) return false;
  for (auto& [id, c] : p->children)
    if (c.held && has_seq(d->seqs, c.held->seq)) settle(c, child_state::delivered);
  p->unacked.erase(d);
  p->changed_at = now_();
  wake(parent_id);
  return true;
}

std::vector<std::uint64_t> ledger::consume(reservation&& r) {
  std::vector<std::uint64_t> seqs = r.seqs();
  if (parent* p = find_mutable(r.parent_id_)) {
    for (auto& [id, c] : p->children)
      if (c.reserved && c.held && has_seq(seqs, c.held->seq)) settle(c, child_state::delivered);
    p->changed_at = now_();
    wake(p->id);
  }
  r.held_.clear();
  r.owner_ = nullptr;
  return seqs;
}

ledger::cancel_outcome ledger::cancel(const std::string& parent_id, const std::vector<std::string>& child_ids) {
  cancel_outcome out;
  parent* p = find_mutable(parent_id);
  if (p == nullptr) return out;
  for (const auto& id : child_ids) {
    auto it = p->children.find(id);
    if (it == p->children.end()) continue;
    child& c = it->second;
    out.cancelled.push_back(id);
    const bool free = c.state == child_state::completed && !c.reserved;
    if (free) out.consume.push_back(c.held->seq);
    if (free || c.state == child_state::running) settle(c, child_state::cancelled);
  }
  p->changed_at = now_();
  wake(parent_id);
  return out;
}

void ledger::recover(pending_queue::recovered what) {
  for (auto& r : what.results) {
    parent& p = get_or_create(r.info.parent_id);
    child& c = child_of(p, r.info.child_id);
    c.title = r.info.title;
    c.state = child_state::completed;
    keep_outcome(c, r);
    c.held = std::move(r);
  }
  for (auto& d : what.deliveries) {
    parent& p = get_or_create(d.parent_id);
    for (auto& [id, c] : p.children) {
      if (!c.held || !has_seq(d.seqs, c.held->seq)) continue;
      c.state = child_state::delivering;
      c.delivery_id = d.delivery_id;
    }
    p.unacked.push_back(std::move(d));
  }
}

ledger::counts ledger::count() const {
  counts n;
  n.parents = parents_.size();
  n.waits = watches_.size();
  for (const auto& [pid, p] : parents_) {
    for (const auto& [cid, c] : p.children) {
      switch (c.state) {
        case child_state::running: ++n.running; break;
        case child_state::completed: ++n.completed; break;
        case child_state::delivering: ++n.delivering; break;
        case child_state::delivered:
        case child_state::cancelled: ++n.delivered; break;
      }
      if (c.held) n.pending_bytes += c.held->shape.bytes;
    }
  }
  return n;
}

}  // namespace handoff::daemon
