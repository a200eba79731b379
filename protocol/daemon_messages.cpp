// JSON forms of daemon/status and daemon/gc (protocol/daemon_messages.hpp).
#include "protocol/daemon_messages.hpp"

#include "protocol/field_reader.hpp"

namespace handoff::rpc {
namespace {

json encode(const store_status& v) {
  json j = json::object();
  j["dir"] = v.dir;
  if (v.files) j["files"] = *v.files;
  if (v.bytes) j["bytes"] = *v.bytes;
  if (v.error) j["error"] = *v.error;
  return j;
}

json encode(const gc_removed& v) {
  json j = json::object();
  j["name"] = v.name;
  j["sha256"] = v.sha256 ? json(*v.sha256) : json(nullptr);
  j["bytes"] = v.bytes;
  j["mtimeUnixS"] = v.mtime_unix_s;
  j["reason"] = v.reason;
  return j;
}

json encode(const surface_limits& v) {
  json j = json::object();
  j["perResultBytes"] = v.per_result_bytes;
  j["perBatchBytes"] = v.per_batch_bytes;
  j["floorBytes"] = v.floor_bytes;
  j["maxLines"] = v.max_lines;
  return j;
}

}  // namespace

json encode(const limits_dto& v) {
  json j = json::object();
  j["maxFrameBytes"] = v.max_frame_bytes;
  j["maxDepth"] = v.max_depth;
  j["maxIdBytes"] = v.wire.max_id_bytes;
  j["maxTitleBytes"] = v.wire.max_title_bytes;
  j["maxErrorBytes"] = v.wire.max_error_bytes;
  j["maxProgressBytes"] = v.wire.max_progress_bytes;
  j["maxFinalTextBytes"] = v.wire.max_final_text_bytes;
  j["maxChildIds"] = v.wire.max_child_ids;
  j["previewBytes"] = v.preview_bytes;
  j["previewLines"] = v.preview_lines;
  j["autoDelivery"] = encode(v.auto_delivery);
  j["wait"] = encode(v.wait);
  j["headShare"] = v.head_share;
  return j;
}

status_params decode_status(const json&, const wire_limits&) { return {}; }

json encode(const status_result& v) {
  json children = json::object();
  children["running"] = v.children.running;
  children["completed"] = v.children.completed;
  children["delivering"] = v.children.delivering;
  children["delivered"] = v.children.delivered;
  json queue = json::object();
  queue["dir"] = v.queue.dir;
  queue["results"] = v.queue.results;
  queue["textBytes"] = v.queue.text_bytes;
  queue["deliveries"] = v.queue.deliveries;
  queue["tombstones"] = v.queue.tombstones;
  queue["groups"] = v.queue.groups;
  queue["changes"] = v.queue.changes;
  json j = json::object();
  j["version"] = v.version;
  j["uptimeMs"] = v.uptime_ms;
  j["connections"] = v.connections;
  j["parents"] = v.parents;
  j["children"] = std::move(children);
  j["waits"] = v.waits;
  j["queue"] = std::move(queue);
  j["store"] = encode(v.store);
  return j;
}

gc_params decode_gc(const json& params, const wire_limits&) {
  gc_params p;
  if (params.is_null()) return p;  // no params: a real collection
  field_reader r(params, "");
  if (r.find("dryRun") != nullptr) p.dry_run = r.boolean("dryRun");
  return p;
}

json encode(const gc_params& v) {
  json j = json::object();
  j["dryRun"] = v.dry_run;
  return j;
}

json encode(const gc_result& v) {
  json removed = json::array();
  for (const auto& r : v.removed) removed.push_back(encode(r));
  json limits = json::object();
  limits["maxAgeS"] = v.max_age_s;
  limits["maxBytes"] = v.max_bytes;
  limits["keepDeliveredS"] = v.keep_delivered_s;
  json j = json::object();
  j["dryRun"] = v.dry_run;
  j["removed"] = std::move(removed);
  j["removedBytes"] = v.removed_bytes;
  j["keptFiles"] = v.kept_files;
  j["keptBytes"] = v.kept_bytes;
  j["protectedFiles"] = v.protected_files;
  j["protectedBytes"] = v.protected_bytes;
  j["overQuota"] = v.over_quota;
  j["ignored"] = v.ignored;
  j["skipped"] = v.skipped;
  j["tombstonesExpired"] = v.tombstones_expired;
  j["limits"] = std::move(limits);
  j["problems"] = v.problems;
  return j;
}

}  // namespace handoff::rpc
