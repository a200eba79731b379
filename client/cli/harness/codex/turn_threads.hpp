// The threads turns run on: one per turn, living as long as its `codex exec` does (the process
// is forked on it, and PR_SET_PDEATHSIG fires when the forking thread ends, not the process).
//
// Contract: run() starts a thread for `body`; a thread is joined soon after its body returns, by
// a reaper thread of this class, so ended turns leave nothing behind however long the server
// lives (held() counts what is not joined yet). join_all() and the destructor wait for every
// body to return. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

namespace handoff::cli::codex {

class turn_threads {
 public:
  turn_threads();
  ~turn_threads();
  turn_threads(const turn_threads&) = delete;
  turn_threads& operator=(const turn_threads&) = delete;

  void run(std::function<void()> body);
  // Waits until every body has returned and its thread is joined, then stops the reaper; run()
  // is not called after.
  void join_all();
  // Threads started and not joined yet.
  std::size_t held() const;

 private:
  void reap();

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // a body returned, threads were joined, or stopping
  std::list<std::thread> threads_;   // started, not joined
  std::vector<std::list<std::thread>::iterator> ended_;  // of threads_: bodies that returned
  std::size_t joining_ = 0;          // taken out of threads_ by the reaper, join under way
  bool stopping_ = false;
  std::thread reaper_;
};

}  // namespace handoff::cli::codex
