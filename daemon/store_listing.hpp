// daemon/status's view of the artifact store (files, bytes), reused while the directory has
// not changed, so the status call normally needs no trip to the worker pool.
//
// "Not changed" is read off the directory's mtime, which every create, rename and unlink in it
// moves. The kernel stamps mtimes from a coarse clock (one tick, 4-10 ms), so two changes in
// one tick share an mtime: a listing is trusted only when it started at least `settle` after
// the mtime it saw; any later change then stamps a later tick. Artifacts are never modified
// in place, so the mtime misses nothing we report.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>

#include "protocol/daemon_messages.hpp"

namespace handoff::daemon {

class store_listing {
 public:
  using clock = std::chrono::system_clock;  // the clock file times are stamped with
  static clock::time_point now() { return clock::now(); }

  // The kept listing, when `dir` is unchanged since it was taken.
  std::optional<rpc::store_status> reuse(const std::filesystem::path& dir) const;
  // Keeps `listing`, taken of `dir` starting at `listed_at`, if it can be trusted later.
  void keep(const std::filesystem::path& dir, const rpc::store_status& listing, clock::time_point listed_at);

 private:
  static constexpr auto settle = std::chrono::milliseconds(50);  // > a kernel tick, generously
  std::optional<clock::time_point> mtime_;  // of the directory when the kept listing was taken
  rpc::store_status listing_;
};

}  // namespace handoff::daemon
