// The ledger's waits and its forgetting (ledger.hpp).
#include <algorithm>

#include "ledger/ledger.hpp"

namespace handoff::daemon {

struct watch::entry {
  std::string parent_id;
  std::vector<std::string> child_ids;
  std::function<void()> wake;
  bool active = true;  // false once the watch was dropped: a wake already under way skips it
};

watch::watch(watch&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), entry_(std::move(other.entry_)) {}

watch& watch::operator=(watch&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr) owner_->unwatch(entry_);
    owner_ = std::exchange(other.owner_, nullptr);
    entry_ = std::move(other.entry_);
  }
  return *this;
}

watch::~watch() {
  if (owner_ != nullptr) owner_->unwatch(entry_);
}

watch ledger::watch_children(const std::string& parent_id, std::vector<std::string> child_ids,
                             std::function<void()> wake) {
  auto e = std::make_shared<watch::entry>(watch::entry{parent_id, std::move(child_ids), std::move(wake)});
  watches_.emplace(parent_id, e);
  return watch(this, std::move(e));
}

void ledger::unwatch(const std::shared_ptr<watch::entry>& e) {
  e->active = false;
  auto [first, last] = watches_.equal_range(e->parent_id);
  for (auto it = first; it != last; ++it) {
    if (it->second != e) continue;
    watches_.erase(it);
    break;
  }
  // The wait is over: the parent's quiet time starts now.
  if (parent* p = find_mutable(e->parent_id)) p->changed_at = now_();
}

void ledger::wake(const std::string& parent_id) {
  // Copied first: a wake may (later) drop its watch; `active` says whether it still stands.
  std::vector<std::shared_ptr<watch::entry>> woken;
  auto [first, last] = watches_.equal_range(parent_id);
  for (auto it = first; it != last; ++it) woken.push_back(it->second);
  for (const auto& e : woken)
    if (e->active) e->wake();
}

void ledger::wake_all() {
  std::vector<std::shared_ptr<watch::entry>> woken;
  for (const auto& [pid, e] : watches_) woken.push_back(e);
  for (const auto& e : woken)
    if (e->active) e->wake();
}

bool ledger::claimed_by_a_wait(const std::string& parent_id, const std::string& child_id) const {
  auto [first, last] = watches_.equal_range(parent_id);
  return std::any_of(first, last, [&](const auto& kv) {
    const auto& ids = kv.second->child_ids;
    return std::find(ids.begin(), ids.end(), child_id) != ids.end();
  });
}

bool ledger::settled(const std::string& parent_id, const std::vector<std::string>& child_ids) const {
  return std::all_of(child_ids.begin(), child_ids.end(), [&](const std::string& id) {
    const child* c = find_child(parent_id, id);
    if (c == nullptr) return true;
    return c->state != child_state::running && !(c->state == child_state::completed && c->reserved);
  });
}

bool ledger::any_running(const std::string& parent_id, const std::vector<std::string>& child_ids) const {
  return std::any_of(child_ids.begin(), child_ids.end(), [&](const std::string& id) {
    const child* c = find_child(parent_id, id);
    return c != nullptr && c->state == child_state::running;
  });
}

wait_outcome ledger::outcome_of(const std::string& parent_id, const std::vector<std::string>& child_ids,
                                const reservation& taken) const {
  wait_outcome out;
  for (const auto& id : child_ids) {
    const bool mine = std::any_of(taken.held().begin(), taken.held().end(),
                                  [&](const held_result& h) { return h.info.child_id == id; });
    if (mine) continue;
    const child* c = find_child(parent_id, id);
    if (c == nullptr) {
      out.forgotten.push_back(id);
      continue;
    }
    switch (c->state) {
      case child_state::running:
      case child_state::completed: out.pending.push_back(id); break;  // reserved by another client
      case child_state::delivering:
      case child_state::delivered: out.already_delivered.push_back(id); break;
      case child_state::cancelled: out.cancelled.push_back(id); break;
    }
  }
  return out;
}

bool ledger::forgettable(const parent& p, ledger_clock::time_point now) const {
  if (!p.endpoint.expired() || !p.unacked.empty() || watches_.count(p.id) > 0) return false;
  if (now - p.changed_at < grace_) return false;
  return std::all_of(p.children.begin(), p.children.end(), [](const auto& kv) {
    return kv.second.state == child_state::delivered || kv.second.state == child_state::cancelled;
  });
}

ledger::forgotten_count ledger::forget_due() {
  forgotten_count n;
  const auto now = now_();
  for (auto it = parents_.begin(); it != parents_.end();) {
    parent& p = it->second;
    if (forgettable(p, now)) {
      n.children += p.children.size();
      ++n.parents;
      it = parents_.erase(it);
      continue;
    }
    n.children += std::erase_if(p.children, [&](const auto& kv) {
      const child& c = kv.second;
      const bool settled = c.state == child_state::delivered || c.state == child_state::cancelled;
      return settled && now - c.settled_at >= grace_;
    });
    ++it;
  }
  return n;
}

}  // namespace handoff::daemon
