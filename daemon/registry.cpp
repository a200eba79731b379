#include "registry.hpp"

#include <algorithm>

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

parent& registry::get_or_create(const std::string& parent_id) {
  auto [it, inserted] = parents_.try_emplace(parent_id);
  if (inserted) it->second.id = parent_id;
  return it->second;
}

parent* registry::find(const std::string& parent_id) {
  auto it = parents_.find(parent_id);
  return it == parents_.end() ? nullptr : &it->second;
}

child* registry::find_child(const std::string& parent_id, const std::string& child_id) {
  parent* p = find(parent_id);
  if (p == nullptr) return nullptr;
  auto it = p->children.find(child_id);
  return it == p->children.end() ? nullptr : &it->second;
}

std::vector<child*> registry::deliverable(parent& p, bool skip_claimed) {
  std::vector<child*> out;
  for (auto& [id, c] : p.children) {
    if (c.state != child_state::completed || c.reserved) continue;
    if (skip_claimed) {
      const std::string& child_id = id;  // clang 14 cannot capture a structured binding
      bool claimed = std::any_of(p.waiters.begin(), p.waiters.end(), [&](const waiter* w) {
        return std::find(w->child_ids.begin(), w->child_ids.end(), child_id) != w->child_ids.end();
      });
      if (claimed) continue;
    }
    out.push_back(&c);
  }
  std::sort(out.begin(), out.end(), [](const child* a, const child* b) { return a->held->seq < b->held->seq; });
  return out;
}

registry::counts registry::count() const {
  counts n;
  n.parents = parents_.size();
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
