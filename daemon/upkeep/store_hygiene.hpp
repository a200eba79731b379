// One collection of the artifact store (engine/store/store_gc.hpp) with the references the daemon
// knows of, and the queue's tombstone expiry: what `daemon/gc` and the periodic run do.
//
// An artifact is referenced, and kept whatever its age and the quota, when
//   - the queue holds a result with the same text (pending_queue::held_texts, which also counts
//     results leaving whose tombstone file is not written yet): completed and not yet
//     delivered, or sent in an auto-delivery the parent has not acknowledged; or
//   - a result with that text left the queue less than keep_delivered ago (its tombstone in
//     done/ says when): the parent may still page the artifact its footer points to.
// Right before each removal the queue is asked again (holds_text), so a completion that arrived
// with the same text after the plan keeps its artifact.
//
// Blocking (directory listings, unlinks, fsync): call on the worker pool.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/queue/pending_queue.hpp"
#include "engine/store/store_gc.hpp"
#include "protocol/daemon_messages.hpp"

namespace handoff::daemon {

struct config;

struct hygiene_settings {
  gc_limits limits;
  std::chrono::seconds keep_delivered{86400};  // see above
  bool expire_tombstones = true;               // those older than max(max_age, keep_delivered)

  static hygiene_settings from(const config& cfg);
  // Only stale temp files go; no artifact, no tombstone (the daemon's start when periodic
  // collection is off).
  static hygiene_settings temps_only();
};

struct hygiene_report {
  bool dry_run = true;
  hygiene_settings settings;
  gc_plan plan;                         // what was (or would be) removed
  gc_outcome outcome;                   // what was removed: empty on a dry run
  std::size_t tombstones_expired = 0;
  std::vector<std::string> problems;    // unreadable tombstones, failed removals, plain words
};

// Plans and (unless `dry_run`) applies one collection of the store at `store_dir` against the
// queue's references, then expires old tombstones. Throws std::runtime_error when the store
// directory itself cannot be opened (not ours, open to others, gone) or listed.
hygiene_report collect_garbage(const std::filesystem::path& store_dir, pending_queue& queue,
                               const hygiene_settings& settings, bool dry_run,
                               std::chrono::system_clock::time_point now = std::chrono::system_clock::now());
// The same for a store directory already open at `dir_fd` (legacy_store.hpp's).
hygiene_report collect_garbage(int dir_fd, pending_queue& queue, const hygiene_settings& settings, bool dry_run,
                               std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// The `daemon/gc` result (docs/protocol.md).
rpc::gc_result to_wire(const hygiene_report& r);

// `daemon/status`'s "store": {dir, files, bytes}; {dir, error} when it cannot be measured.
rpc::store_status store_status(const std::filesystem::path& store_dir);

}  // namespace handoff::daemon
