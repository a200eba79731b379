// The artifact store's former default directory, drained after an upgrade (docs/design.md §7).
//
// Before handoff had a cache directory of its own the store's default was
// ${PI_CODING_AGENT_DIR:-~/.pi/agent}/cache/openpi/subagent-results (rpc::legacy_artifact_dir),
// and the footers delivered then name files there. So while handoffd runs with the default store
// (config::legacy_artifact_dir is set) and that directory exists:
//   - artifact/read finds an artifact there when the store has none of that name;
//   - each collection (at start, periodic, and a real daemon/gc) collects it too, by the same
//     limits and the same references as the store (store_hygiene.hpp); nothing new is written
//     there, so it drains within --gc-max-age-days of the upgrade plus what the queue holds;
//   - a collection that leaves it empty removes it, and its parent `openpi` when that is empty.
// Nothing here creates a directory or follows a symlink: each call opens the directory afresh
// with open_existing_private_dir, and one that is a symlink, not ours or open to others is
// refused (the caller logs it) and left as it is. A directory the user named is never this one.
// Blocking (directory walks, unlinks): call on the worker pool. Holds no state: thread-safe.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "engine/fs/mapped_file.hpp"
#include "engine/queue/pending_queue.hpp"
#include "upkeep/store_hygiene.hpp"

namespace handoff::daemon {

// The artifact named `sha256_hex` in the former store `dir`, mapped read-only; nullopt when `dir`
// is empty or absent, or holds no regular file of ours at that name. Throws std::runtime_error
// when `dir` exists but is not a private directory of ours.
std::optional<mapped_file> open_legacy_artifact(const std::filesystem::path& dir, std::string_view sha256_hex);

struct legacy_drain {
  std::optional<hygiene_report> report;  // none when there was no directory to collect
  bool removed = false;                  // the collection left it empty and it is gone
  std::string problem;                   // why an empty directory could not be removed
};

// One collection of the former store `dir` (see above; tombstones are the store's collection's
// to expire). A dry run plans and removes nothing. Throws as open_legacy_artifact does.
legacy_drain drain_legacy_store(const std::filesystem::path& dir, pending_queue& queue,
                                const hygiene_settings& settings, bool dry_run);

// Says in the log what a drain did: info when it removed something, debug otherwise.
void log_legacy_drain(const std::filesystem::path& dir, const legacy_drain& drain);

}  // namespace handoff::daemon
