#include "cli/harness/codex/scheduler.hpp"

#include <signal.h>

#include <algorithm>

namespace handoff::cli::codex {

void scheduler::admit(turn& t, bool behind) {
  if (behind) {
    t.phase = phase::waiting;
    return;
  }
  t.phase = phase::queued;
  queue_.push_back(&t);
}

std::vector<turn*> scheduler::ready() {
  std::vector<turn*> out;
  while (running_ < max_running_ && !queue_.empty()) {
    turn* next = queue_.front();
    queue_.pop_front();
    next->phase = phase::running;
    ++running_;
    out.push_back(next);
  }
  return out;
}

std::size_t scheduler::position(const turn& t) const {
  const auto it = std::find(queue_.begin(), queue_.end(), &t);
  return it == queue_.end() ? 0 : static_cast<std::size_t>(it - queue_.begin()) + 1;
}

void scheduler::ended(const turn& t) {
  --running_;
  for (const std::unique_ptr<turn>& next : t.owner->turns)
    if (next->phase == phase::waiting) {
      next->phase = phase::queued;
      queue_.push_back(next.get());
      return;
    }
}

bool scheduler::cancel(turn& t) {
  if (t.phase == phase::finished || t.phase == phase::cancelled) return false;
  if (t.phase == phase::running && t.pid > 0) ::kill(-t.pid, SIGTERM);
  if (t.phase == phase::queued) queue_.erase(std::remove(queue_.begin(), queue_.end(), &t), queue_.end());
  t.phase = phase::cancelled;
  t.reported = true;
  return true;
}

}  // namespace handoff::cli::codex
