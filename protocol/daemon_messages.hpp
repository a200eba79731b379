// Typed params and results of the daemon's own methods, daemon/status and daemon/gc, with their
// JSON forms (docs/protocol.md sections "daemon/status" and "daemon/gc"), described for
// wire.hpp's walks. Wire names camelCase.
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
template <>
struct wire::shape<surface_limits> {
  static constexpr auto fields = std::tuple{
      field("perResultBytes", &surface_limits::per_result_bytes, count),
      field("perBatchBytes", &surface_limits::per_batch_bytes, count),
      field("floorBytes", &surface_limits::floor_bytes, count),
      field("maxLines", &surface_limits::max_lines, count)};
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
// The caps on client fields as initialize's `limits` lists them (max_timeout_ms is not listed).
template <>
struct wire::shape<wire_limits> {
  static constexpr auto fields = std::tuple{
      field("maxIdBytes", &wire_limits::max_id_bytes, count),
      field("maxTitleBytes", &wire_limits::max_title_bytes, count),
      field("maxErrorBytes", &wire_limits::max_error_bytes, count),
      field("maxProgressBytes", &wire_limits::max_progress_bytes, count),
      field("maxFinalTextBytes", &wire_limits::max_final_text_bytes, count),
      field("maxChildIds", &wire_limits::max_child_ids, count)};
};
template <>
struct wire::shape<limits_dto> {
  static constexpr auto fields = std::tuple{
      field("maxFrameBytes", &limits_dto::max_frame_bytes, count),
      field("maxDepth", &limits_dto::max_depth, count),
      flatten(&limits_dto::wire),
      field("previewBytes", &limits_dto::preview_bytes, count),
      field("previewLines", &limits_dto::preview_lines, count),
      field("autoDelivery", &limits_dto::auto_delivery, object_of<surface_limits>),
      field("wait", &limits_dto::wait, object_of<surface_limits>),
      field("headShare", &limits_dto::head_share, number)};
};

// ---- daemon/status ------------------------------------------------------------------------

struct status_params {};  // none; whatever params are sent are ignored

struct child_counts {
  std::size_t running = 0;     // running: started, not completed
  std::size_t completed = 0;   // completed: held, not yet delivered
  std::size_t delivering = 0;  // delivering: in an auto-delivery not yet acknowledged
  std::size_t delivered = 0;   // delivered: delivered, consumed or cancelled, not yet forgotten
};
template <>
struct wire::shape<child_counts> {
  static constexpr auto fields = std::tuple{
      field("running", &child_counts::running, count),
      field("completed", &child_counts::completed, count),
      field("delivering", &child_counts::delivering, count),
      field("delivered", &child_counts::delivered, count)};
};
template <>
struct wire::shape<status_params> {
  static constexpr bool params_ignored = true;
  static constexpr auto fields = std::tuple{};
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
template <>
struct wire::shape<queue_status> {
  static constexpr auto fields = std::tuple{
      field("dir", &queue_status::dir, any_text),
      field("results", &queue_status::results, count),
      field("textBytes", &queue_status::text_bytes, count),
      field("deliveries", &queue_status::deliveries, count),
      field("tombstones", &queue_status::tombstones, count),
      field("groups", &queue_status::groups, count64),
      field("changes", &queue_status::changes, count64)};
};

struct store_status {
  std::string dir;                    // dir: the artifact store's absolute directory
  std::optional<std::size_t> files;   // files: artifacts in it (absent with `error`)
  std::optional<std::uint64_t> bytes; // bytes: their total size (absent with `error`)
  std::optional<std::string> error;   // error: why the store could not be measured, else absent
};
template <>
struct wire::shape<store_status> {
  static constexpr auto fields = std::tuple{
      field("dir", &store_status::dir, any_text),
      optional_field("files", &store_status::files, count, when_default::omitted),
      optional_field("bytes", &store_status::bytes, count64, when_default::omitted),
      optional_field("error", &store_status::error, any_text, when_default::omitted)};
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
template <>
struct wire::shape<status_result> {
  static constexpr auto fields = std::tuple{
      field("version", &status_result::version, any_text),
      field("uptimeMs", &status_result::uptime_ms, integer<std::int64_t>{}),
      field("connections", &status_result::connections, count),
      field("parents", &status_result::parents, count),
      field("children", &status_result::children, object_of<child_counts>),
      field("waits", &status_result::waits, count),
      field("queue", &status_result::queue, object_of<queue_status>),
      field("store", &status_result::store, object_of<store_status>)};
};

// ---- daemon/gc ----------------------------------------------------------------------------

struct gc_params {
  bool dry_run = false;  // dryRun: optional; true: plan only, remove nothing
};
template <>
struct wire::shape<gc_params> {
  static constexpr bool params_may_be_null = true;  // no params: a real collection
  static constexpr auto fields = std::tuple{optional_field("dryRun", &gc_params::dry_run, boolean)};
};

struct gc_removed {
  std::string name;                    // name: the file's name in the store
  std::optional<std::string> sha256;   // sha256: an artifact's hash; null for a temp file
  std::uint64_t bytes = 0;             // bytes: its size
  std::int64_t mtime_unix_s = 0;       // mtimeUnixS: its mtime, Unix seconds
  std::string reason;                  // reason: why it goes: "age", "size" (over quota) or "temp"
};
template <>
struct wire::shape<gc_removed> {
  static constexpr auto fields = std::tuple{
      field("name", &gc_removed::name, any_text),
      optional_field("sha256", &gc_removed::sha256, any_text),
      field("bytes", &gc_removed::bytes, count64),
      field("mtimeUnixS", &gc_removed::mtime_unix_s, any_integer),
      field("reason", &gc_removed::reason, any_text)};
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
template <>
struct wire::shape<gc_result> {
  static constexpr auto fields = std::tuple{
      field("dryRun", &gc_result::dry_run, boolean),
      field("removed", &gc_result::removed, list_of<gc_removed>),
      field("removedBytes", &gc_result::removed_bytes, count64),
      field("keptFiles", &gc_result::kept_files, count),
      field("keptBytes", &gc_result::kept_bytes, count64),
      field("protectedFiles", &gc_result::protected_files, count),
      field("protectedBytes", &gc_result::protected_bytes, count64),
      field("overQuota", &gc_result::over_quota, boolean),
      field("ignored", &gc_result::ignored, count),
      field("skipped", &gc_result::skipped, count),
      field("tombstonesExpired", &gc_result::tombstones_expired, count),
      group("limits", field("maxAgeS", &gc_result::max_age_s, any_integer),
            field("maxBytes", &gc_result::max_bytes, count64),
            field("keepDeliveredS", &gc_result::keep_delivered_s, any_integer)),
      field("problems", &gc_result::problems, strings)};
};

}  // namespace handoff::rpc
