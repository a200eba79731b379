// Typed params and results of the daemon's own methods, daemon/status and daemon/gc, with their
// JSON forms (docs/protocol.md sections "daemon/status" and "daemon/gc"). Wire names camelCase.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/messages.hpp"

namespace handoff::rpc {

// ---- initialize's `limits`: the daemon's effective caps ------------------------------------

struct surface_limits {
  std::size_t per_result_bytes = 0;  // perResultBytes: one result's projection, bytes
  std::size_t per_batch_bytes = 0;   // perBatchBytes: one rendered batch, bytes
  std::size_t floor_bytes = 0;       // floorBytes: no result is cut below this, bytes
  std::size_t max_lines = 0;         // maxLines: one result's projection, lines
};

struct limits_dto {
  std::size_t max_frame_bytes = 0;       // maxFrameBytes: one JSON-RPC frame
  std::size_t max_depth = 0;             // maxDepth: JSON nesting per message
  wire_limits wire;                      // maxIdBytes ... maxChildIds: caps on client fields
  std::size_t preview_bytes = 0;         // previewBytes: a check preview, bytes
  std::size_t preview_lines = 0;         // previewLines: a check preview, lines
  surface_limits auto_delivery;          // autoDelivery
  surface_limits wait;                   // wait
  double head_share = 0;                 // headShare: a projection's share for the head
};

// ---- daemon/status ------------------------------------------------------------------------

struct status_params {};  // none; whatever params are sent are ignored

struct child_counts {
  std::size_t running = 0;     // running: started, not completed
  std::size_t completed = 0;   // completed: held, not yet delivered
  std::size_t delivering = 0;  // delivering: in an auto-delivery not yet acknowledged
  std::size_t delivered = 0;   // delivered: delivered, consumed or cancelled, not yet forgotten
};

struct queue_status {
  std::string dir;               // dir: the durable queue's absolute directory
  std::size_t results = 0;       // results: completions held
  std::size_t text_bytes = 0;    // textBytes: their full texts on disk, bytes (shared once)
  std::size_t deliveries = 0;    // deliveries: auto-deliveries not yet acknowledged
  std::size_t tombstones = 0;    // tombstones: delivered results kept for idempotent resends
  std::uint64_t groups = 0;      // groups: journal groups written since the daemon started (each one
                                 //   append and one fdatasync)
  std::uint64_t changes = 0;     // changes: puts, deliveries, retirements those groups carried
};

struct store_status {
  std::string dir;                    // dir: the artifact store's absolute directory
  std::optional<std::size_t> files;   // files: artifacts in it (absent with `error`)
  std::optional<std::uint64_t> bytes; // bytes: their total size (absent with `error`)
  std::optional<std::string> error;   // error: why the store could not be measured, else absent
};

struct status_result {
  std::string version;           // version: handoffd's version
  std::int64_t uptime_ms = 0;    // uptimeMs: since the daemon started, ms
  std::size_t connections = 0;   // connections: open connections
  std::size_t parents = 0;       // parents: parents known (forgotten ones are not)
  child_counts children;         // children: children known, per state
  std::size_t waits = 0;         // waits: subagent/wait calls asleep
  queue_status queue;            // queue
  store_status store;            // store
};

// ---- daemon/gc ----------------------------------------------------------------------------

struct gc_params {
  bool dry_run = false;  // dryRun: optional; true: plan only, remove nothing
};

struct gc_removed {
  std::string name;                    // name: the file's name in the store
  std::optional<std::string> sha256;   // sha256: an artifact's hash; null for a temp file
  std::uint64_t bytes = 0;             // bytes: its size
  std::int64_t mtime_unix_s = 0;       // mtimeUnixS: its mtime, Unix seconds
  std::string reason;                  // reason: why it goes: "age", "size" (over quota) or "temp"
};

struct gc_result {
  bool dry_run = false;                // dryRun: echoed
  std::vector<gc_removed> removed;     // removed: what went (a dry run: what would go)
  std::uint64_t removed_bytes = 0;     // removedBytes
  std::size_t kept_files = 0;          // keptFiles: artifacts left, protected ones included
  std::uint64_t kept_bytes = 0;        // keptBytes
  std::size_t protected_files = 0;     // protectedFiles: kept because still referenced
  std::uint64_t protected_bytes = 0;   // protectedBytes
  bool over_quota = false;             // overQuota: keptBytes > limits.maxBytes
  std::size_t ignored = 0;             // ignored: names left alone (not ours, not artifacts)
  std::size_t skipped = 0;             // skipped: planned removals that changed meanwhile
  std::size_t tombstones_expired = 0;  // tombstonesExpired: old tombstones dropped from the queue
  std::int64_t max_age_s = 0;          // limits.maxAgeS: artifacts older than this go, s
  std::uint64_t max_bytes = 0;         // limits.maxBytes: then oldest first down to this, bytes
  std::int64_t keep_delivered_s = 0;   // limits.keepDeliveredS: delivered within this stay, s
  std::vector<std::string> problems;   // problems: plain words, one per trouble met
};

json encode(const limits_dto& v);
status_params decode_status(const json& params, const wire_limits& lim);
json encode(const status_result& v);
gc_params decode_gc(const json& params, const wire_limits& lim);
json encode(const gc_params& v);
json encode(const gc_result& v);

}  // namespace handoff::rpc
