// Results of the client -> daemon methods and params of the daemon -> client ones: encoders for
// the daemon and decoders for clients. The decoders check every type but do not impose the
// daemon's input caps; an absent or null optional member decodes as unset.
#include <string>

#include "protocol/field_reader.hpp"
#include "protocol/messages.hpp"

namespace handoff::rpc {
namespace {

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

}  // namespace

json encode(const initialize_result& v) {
  json j = json::object();
  j["protocolVersion"] = v.protocol_version;
  j["serverVersion"] = v.server_version;
  j["parentId"] = or_null(v.parent_id);
  j["artifactDir"] = v.artifact_dir;
  j["limits"] = v.limits.is_object() ? v.limits : json::object();
  return j;
}

initialize_result decode_initialize_result(const json& j) {
  field_reader r(j, "", "result");
  initialize_result v;
  v.protocol_version = r.string("protocolVersion");
  v.server_version = r.string("serverVersion");
  v.parent_id = r.optional_string("parentId");
  v.artifact_dir = r.string("artifactDir");
  v.limits = r.object("limits");
  return v;
}

json encode(const started_result& v) {
  json j = json::object();
  j["state"] = v.state;
  return j;
}

started_result decode_started_result(const json& j) {
  field_reader r(j, "", "result");
  return started_result{r.string("state")};
}

json encode(const completed_result& v) {
  json j = json::object();
  j["duplicate"] = v.duplicate;
  j["sha256"] = v.sha256;
  j["bytes"] = v.bytes;
  j["lines"] = v.lines;
  return j;
}

completed_result decode_completed_result(const json& j) {
  field_reader r(j, "", "result");
  completed_result v;
  v.duplicate = r.boolean("duplicate");
  v.sha256 = r.string("sha256");
  v.bytes = r.count("bytes");
  v.lines = r.count("lines");
  return v;
}

json encode(const check_result& v) {
  json j = json::object();
  j["childId"] = v.child_id;
  j["title"] = v.title;
  j["state"] = v.state;
  j["status"] = v.status.empty() ? json() : json(v.status);
  if (!v.error.empty()) j["error"] = v.error;
  j["preview"] = v.preview;
  j["previewTruncated"] = v.preview_truncated;
  j["bytes"] = or_null(v.bytes);
  j["lines"] = or_null(v.lines);
  return j;
}

check_result decode_check_result(const json& j) {
  field_reader r(j, "", "result");
  check_result v;
  v.child_id = r.string("childId");
  v.title = r.string("title");
  v.state = r.string("state");
  v.status = r.optional_string("status").value_or("");
  v.error = r.optional_string("error").value_or("");
  v.preview = r.string("preview");
  v.preview_truncated = r.boolean("previewTruncated");
  v.bytes = r.optional_count("bytes");
  v.lines = r.optional_count("lines");
  return v;
}

json encode(const wait_result& v) {
  json j = encode(v.batch);
  j["timedOut"] = v.timed_out;
  j["pending"] = v.pending;
  j["alreadyDelivered"] = v.already_delivered;
  j["cancelled"] = v.cancelled;
  j["forgotten"] = v.forgotten;
  return j;
}

wait_result decode_wait_result(const json& j) {
  wait_result v;
  v.batch = decode_batch(j);
  field_reader r(j, "", "result");
  v.timed_out = r.boolean("timedOut");
  v.pending = r.string_list("pending");
  // Added in 0.1.1; an older daemon leaves them out.
  if (j.contains("alreadyDelivered")) v.already_delivered = r.string_list("alreadyDelivered");
  if (j.contains("cancelled")) v.cancelled = r.string_list("cancelled");
  if (j.contains("forgotten")) v.forgotten = r.string_list("forgotten");  // added after 0.1.0
  return v;
}

json encode(const cancel_result& v) {
  json j = json::object();
  j["cancelled"] = v.cancelled;
  j["consumed"] = v.consumed;
  return j;
}

cancel_result decode_cancel_result(const json& j) {
  field_reader r(j, "", "result");
  cancel_result v;
  v.cancelled = r.string_list("cancelled");
  v.consumed = r.count("consumed");
  return v;
}

json encode(const artifact_read_result& v) {
  json j = json::object();
  j["path"] = v.path;
  j["text"] = v.text;
  j["firstLine"] = v.first_line;
  j["lastLine"] = v.last_line;
  j["totalLines"] = v.total_lines;
  j["cut"] = v.cut;
  j["nextOffset"] = or_null(v.next_offset);
  return j;
}

artifact_read_result decode_artifact_read_result(const json& j) {
  field_reader r(j, "", "result");
  artifact_read_result v;
  v.path = r.string("path");
  v.text = r.string("text");
  v.first_line = r.count("firstLine");
  v.last_line = r.count("lastLine");
  v.total_lines = r.count("totalLines");
  v.cut = r.boolean("cut");
  v.next_offset = r.optional_count("nextOffset");
  return v;
}

json encode(const deliver_params& v) {
  json j = encode(v.batch);
  j["parentId"] = v.parent_id;
  j["deliveryId"] = v.delivery_id;
  return j;
}

deliver_params decode_deliver(const json& params) {
  field_reader r(params, "");
  deliver_params v;
  v.parent_id = r.string("parentId");
  v.delivery_id = r.string("deliveryId");
  v.batch = decode_batch(params);
  return v;
}

}  // namespace handoff::rpc
