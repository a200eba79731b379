#include "cli/harness/codex/turn_threads.hpp"

#include <utility>

namespace handoff::cli::codex {

turn_threads::turn_threads() : reaper_([this] { reap(); }) {}

turn_threads::~turn_threads() { join_all(); }

void turn_threads::run(std::function<void()> body) {
  const std::lock_guard<std::mutex> hold(mutex_);
  const auto slot = threads_.emplace(threads_.end());
  // The thread reports its end under mutex_, which is held here until *slot is assigned.
  try {
    *slot = std::thread([this, slot, body = std::move(body)] {
      body();
      const std::lock_guard<std::mutex> ending(mutex_);
      ended_.push_back(slot);
      changed_.notify_all();
    });
  } catch (...) {
    threads_.erase(slot);  // no thread: nothing to join
    throw;
  }
}

void turn_threads::reap() {
  std::unique_lock<std::mutex> held(mutex_);
  for (;;) {
    changed_.wait(held, [this] { return !ended_.empty() || stopping_; });
    if (ended_.empty()) return;  // stopping, and join_all saw nothing left
    std::vector<std::thread> done;
    for (const auto slot : ended_) {
      done.push_back(std::move(*slot));
      threads_.erase(slot);
    }
    ended_.clear();
    joining_ += done.size();
    held.unlock();
    // Each body has returned: these joins wait only for the threads' last instructions.
    for (std::thread& t : done) t.join();
    held.lock();
    joining_ -= done.size();
    changed_.notify_all();
  }
}

void turn_threads::join_all() {
  {
    std::unique_lock<std::mutex> held(mutex_);
    if (!reaper_.joinable()) return;
    changed_.wait(held, [this] { return threads_.empty() && joining_ == 0; });
    stopping_ = true;
  }
  changed_.notify_all();
  reaper_.join();
}

std::size_t turn_threads::held() const {
  const std::lock_guard<std::mutex> hold(mutex_);
  return threads_.size() + joining_;
}

}  // namespace handoff::cli::codex
