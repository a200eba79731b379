// daemon/status's view of the artifact store (files, bytes), reused while the directory has
// not changed, so the status call normally needs no trip to the worker pool.
//
// "Not changed" is told by an inotify watch on the directory: every create, unlink, rename and
// finished write in it, by anyone, queues an event before the system call that made it returns.
// reuse() drains the watch with one non-blocking read (about a quarter of an fstatat of the
// directory's path on these machines) and drops the listing on any event. So a change made
// before a request was sent (an artifact saved before a wait's reply, a file removed by hand)
// is always seen; the watch is read when a status asks, never by the event loop, whose reads
// of a request may bypass epoll and so could overtake it.
// Without a watch (inotify refused, or the directory moved or removed, when the watch would
// follow the old inode) reuse() reads the directory's mtime instead, which every create,
// rename and unlink in it moves (one fstatat).
//
// A listing is kept only if the directory did not change while it was taken, read off its
// mtime. The kernel stamps mtimes from a coarse clock (one tick, 4-10 ms), so two changes in one
// tick share an mtime: a listing is trusted only when it started at least `settle` after the
// mtime it saw; any later change then stamps a later tick. Artifacts are never modified in
// place once named, so nothing we report is missed.
// I/O thread only.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "engine/fs/posix_io.hpp"
#include "protocol/daemon_messages.hpp"

namespace handoff::daemon {

class store_listing {
 public:
  using clock = std::chrono::system_clock;  // the clock file times are stamped with
  static clock::time_point now() { return clock::now(); }

  // Watches `dir` from now on; when it cannot (logged), reuse() checks the mtime.
  void watch(const std::filesystem::path& dir);

  // The kept listing, when `dir` is unchanged since it was taken.
  std::optional<rpc::store_status> reuse(const std::filesystem::path& dir);
  // Keeps `listing`, taken of `dir` starting at `listed_at`, if it can be trusted later.
  void keep(const std::filesystem::path& dir, const rpc::store_status& listing, clock::time_point listed_at);

 private:
  // Reads every queued event; false when there were any (or the watch failed: it is dropped).
  bool unchanged_since_last_read();

  static constexpr auto settle = std::chrono::milliseconds(50);  // > a kernel tick, generously
  std::optional<clock::time_point> mtime_;  // of the directory when the kept listing was taken
  rpc::store_status listing_;
  unique_fd watch_;  // a non-blocking inotify instance watching the directory, or none
};

}  // namespace handoff::daemon
