// Garbage collection of the artifact store (docs/design.md §7: the store is a cache).
//
// Planning and removing are separate steps so that a dry run shows exactly what a real run
// would remove, and so the daemon can check references again between the two:
//   plan_gc   lists the store and decides; it changes nothing.
//   apply_gc  removes what a plan listed, each file only if it is still the very file planned
//             and still unreferenced at the moment of removal.
// What goes, in this order:
//   temp      ".tmp-*" files older than temp_grace: a save that crashed midway. Younger ones
//             may be a save in progress and are left alone.
//   age       artifacts whose mtime is older than max_age.
//   size      then, oldest mtime first (name breaks ties), artifacts until the store holds at
//             most max_bytes.
// Never removed: artifacts whose sha256 is in the protected set (the daemon passes the texts
// of undelivered results and of recent deliveries, which share their sha256 with the
// artifact), anything that is not a regular file of ours, and names that are neither
// "<64 lowercase hex>.txt" nor temps. Protected artifacts count towards max_bytes, so a store
// whose protected part alone is over the quota stays over it (gc_plan::over_quota).
//
// No symlink is ever followed: everything is done relative to the store's directory fd with
// fstatat(AT_SYMLINK_NOFOLLOW) and unlinkat. Calls block on disk I/O.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

struct gc_limits {
  std::chrono::seconds max_age = std::chrono::hours(24 * 7);  // by mtime; default 7 days
  std::uint64_t max_bytes = std::uint64_t{1} << 30;           // artifact bytes kept; default 1 GiB
  std::chrono::seconds temp_grace = std::chrono::minutes(1);  // temps younger than this stay

  // Limits under which no artifact ever goes: only stale temps are swept (the daemon's start).
  static gc_limits temps_only() noexcept;
};

enum class gc_reason { temp, age, size };
std::string_view to_string(gc_reason r) noexcept;

// One file a plan removes, and how to recognise it is still the same file.
struct gc_entry {
  std::string name;           // in the store directory
  std::string sha256;         // the artifact's hash; "" for a temp
  std::uint64_t bytes = 0;    // st_size
  std::int64_t mtime_unix_s = 0;
  gc_reason reason = gc_reason::age;
  // Identity as the plan saw it. ctime is in it because nobody can set it: a file re-created
  // under the same name (even on a reused inode, with a copied mtime) or touched has a new one.
  dev_t dev = 0;
  ino_t ino = 0;
  std::int64_t mtime_ns = 0;  // seconds * 1e9 + nanoseconds
  std::int64_t ctime_ns = 0;
};

struct gc_plan {
  std::vector<gc_entry> remove;       // temps first, then artifacts oldest first
  std::size_t kept_files = 0;         // artifacts left after the plan, protected ones included
  std::uint64_t kept_bytes = 0;
  std::size_t protected_files = 0;    // kept because referenced (also counted in kept_*)
  std::uint64_t protected_bytes = 0;
  std::size_t ignored = 0;            // names left alone: not ours, not regular, not artifacts
  bool over_quota = false;            // kept_bytes > max_bytes (only protected ones were left)
};

using sha256_set = std::set<std::string, std::less<>>;

// Decides what to remove from the store open at `dir_fd`, as of `now`. Throws fs_error when
// the directory cannot be listed; a file that vanishes meanwhile is simply not counted.
gc_plan plan_gc(int dir_fd, std::chrono::system_clock::time_point now, const gc_limits& limits,
                const sha256_set& protected_sha256);

// Answers, right before an artifact is removed, whether something references it after all.
using still_referenced_fn = std::function<bool(std::string_view sha256)>;

struct gc_outcome {
  std::vector<gc_entry> removed;        // what is gone now
  std::size_t skipped = 0;              // vanished, changed since the plan, or referenced again
  std::vector<std::string> problems;    // removals that failed, in plain words
};

// Removes the plan's files from the store open at `dir_fd`. A file is removed only when it is
// still the regular file the plan saw (same device, inode, size, mtime and ctime) and, for an
// artifact, `still_referenced` (when given) answers false. Never throws for a single file's
// trouble: it goes to `problems` and the rest continue. The directory is fsynced at the end.
gc_outcome apply_gc(int dir_fd, const gc_plan& plan, const still_referenced_fn& still_referenced = {});

// What the store holds now: artifacts (regular files named "<sha256>.txt") and their bytes.
struct store_usage {
  std::size_t files = 0;
  std::uint64_t bytes = 0;
};
store_usage measure_store(int dir_fd);

}  // namespace handoff
