// A flag that stops a call in progress from another thread or from a signal handler: raise()
// is an atomic store and one write(2) to an eventfd, both async-signal-safe. A call given one
// (connection::wait) polls its fd next to the socket; once it is raised the call asks the daemon
// to cancel the request ($/cancelRequest, docs/protocol.md) and reads on until the daemon says
// which way it went, so an answer written a moment before the cancel is still read, not lost.
//
// Raised once, it stays raised: use one per call that may be interrupted.
#pragma once

#include <atomic>

namespace handoff::client {

class cancel_signal {
 public:
  // Throws client_error{io} when no eventfd can be made.
  cancel_signal();
  ~cancel_signal();
  cancel_signal(const cancel_signal&) = delete;
  cancel_signal& operator=(const cancel_signal&) = delete;

  void raise() noexcept;
  bool raised() const noexcept { return raised_.load(std::memory_order_acquire); }
  // Readable once raised.
  int fd() const noexcept { return fd_; }

 private:
  int fd_ = -1;
  std::atomic<bool> raised_{false};
  static_assert(std::atomic<bool>::is_always_lock_free, "raise() must be async-signal-safe");
};

}  // namespace handoff::client
