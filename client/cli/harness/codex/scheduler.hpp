// Which turns run: at most max_running at once, the others queued in the order they came; a
// turn of a child that has an unfinished turn waits behind it and joins the queue when it ends.
//
// The scheduler only moves turns between phases (turn.hpp) and counts the running ones; the
// caller starts what ready() returns, and stops what cancel() marks. Not thread-safe: the children class calls it under its lock.
#pragma once

#include <cstddef>
#include <deque>
#include <vector>

#include "cli/harness/codex/turn.hpp"

namespace handoff::cli::codex {

class scheduler {
 public:
  // max_running: turns running at once, 1..32 ($HANDOFF_CODEX_MAX_RUNNING, default 4).
  explicit scheduler(std::size_t max_running) : max_running_(max_running) {}

  // Places `t`, the newest turn of its child: waiting when `behind` (its child had a turn
  // waiting, queued or running when it was added), else queued.
  void admit(turn& t, bool behind);
  // The queued turns that may start now, in order, each now running and counted.
  std::vector<turn*> ready();
  // `t`'s place in the queue, from 1; 0 when it is not queued.
  std::size_t position(const turn& t) const;
  // `t`, which was running, has ended: its slot is free, and its child's next waiting turn
  // is queued.
  void ended(const turn& t);
  // `t` is cancelled when it has not finished: a running one's process group gets SIGTERM (its
  // thread still ends it through ended()), a queued one leaves the queue; it has nothing to
  // report. False when it had finished or was cancelled already.
  bool cancel(turn& t);
  // Nothing more starts: the queue is emptied (the server is closing).
  void clear() { queue_.clear(); }

 private:
  std::size_t max_running_;
  std::size_t running_ = 0;
  std::deque<turn*> queue_;  // phase queued, in order
};

}  // namespace handoff::cli::codex
