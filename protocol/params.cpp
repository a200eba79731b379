// Params of the client -> daemon methods: strict decoders for the daemon (every field checked,
// named when wrong, capped by wire_limits) and the matching encoders for clients. Optional
// params are left out when unset.
#include <algorithm>
#include <string>
#include <utility>

#include "protocol/field_reader.hpp"
#include "protocol/messages.hpp"

namespace handoff::rpc {
namespace {

constexpr std::size_t max_version_bytes = 32;  // protocolVersion

bool is_sha256_hex(std::string_view s) noexcept {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

initialize_params decode_initialize(const json& params, const wire_limits& lim) {
  static const json no_params = json::object();  // initialize's params are all optional
  field_reader r(params.is_null() ? no_params : params, "");
  initialize_params p;
  p.protocol_version = r.optional_string("protocolVersion", max_version_bytes)
                           .value_or(std::string(protocol_version));
  p.client_name = r.optional_string("clientName", lim.max_title_bytes).value_or("");
  p.parent_id = r.optional_id("parentId", lim.max_id_bytes);
  return p;
}

json encode(const initialize_params& v) {
  json j = json::object();
  j["protocolVersion"] =
      v.protocol_version.empty() ? std::string(protocol_version) : v.protocol_version;
  if (!v.client_name.empty()) j["clientName"] = v.client_name;
  if (v.parent_id) j["parentId"] = *v.parent_id;
  return j;
}

started_params decode_started(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  started_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.child_id = r.id("childId", lim.max_id_bytes);
  p.title = r.optional_string("title", lim.max_title_bytes).value_or("");
  return p;
}

json encode(const started_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["childId"] = v.child_id;
  if (!v.title.empty()) j["title"] = v.title;
  return j;
}

progress_params decode_progress(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  progress_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.child_id = r.id("childId", lim.max_id_bytes);
  p.text = r.string("text", lim.max_progress_bytes);
  return p;
}

json encode(const progress_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["childId"] = v.child_id;
  j["text"] = v.text;
  return j;
}

namespace {

// Every member but finalText, which the two decoders below copy or move.
completed_params completed_but_text(const field_reader& r, const wire_limits& lim) {
  completed_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.child_id = r.id("childId", lim.max_id_bytes);
  p.title = r.optional_string("title", lim.max_title_bytes).value_or("");
  p.status = r.one_of("status", {"done", "error", "cancelled"});
  p.error = r.optional_string("error", lim.max_error_bytes).value_or("");
  return p;
}

}  // namespace

completed_params decode_completed(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  completed_params p = completed_but_text(r, lim);
  p.final_text = r.string("finalText", lim.max_final_text_bytes);
  return p;
}

completed_params take_completed(json&& params, const wire_limits& lim) {
  field_reader r(params, "");
  completed_params p = completed_but_text(r, lim);
  r.check_string("finalText", lim.max_final_text_bytes);
  p.final_text = std::move(params["finalText"].get_ref<std::string&>());
  return p;
}

json encode(const completed_params& v) {
  json j = encode_without_final_text(v);
  j["finalText"] = v.final_text;
  return j;
}

json encode_without_final_text(const completed_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["childId"] = v.child_id;
  if (!v.title.empty()) j["title"] = v.title;
  j["status"] = v.status;
  if (!v.error.empty()) j["error"] = v.error;
  return j;
}

check_params decode_check(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  check_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.child_id = r.id("childId", lim.max_id_bytes);
  return p;
}

json encode(const check_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["childId"] = v.child_id;
  return j;
}

wait_params decode_wait(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  wait_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.child_ids = r.id_list("childIds", lim.max_child_ids, lim.max_id_bytes);
  p.timeout_ms = r.optional_integer("timeoutMs", 0, lim.max_timeout_ms);
  if (const json* usage = r.find("usage")) p.usage = decode_usage(*usage, "usage");
  if (r.find("batchWith") != nullptr) {
    const json& with = r.array("batchWith");
    if (!with.empty()) p.batch_with = r.id_list("batchWith", lim.max_child_ids, lim.max_id_bytes);
  }
  if (r.find("reader") != nullptr) p.reader = r.one_of("reader", {"pi", "claude-code"});
  return p;
}

json encode(const wait_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["childIds"] = v.child_ids;
  if (v.timeout_ms) j["timeoutMs"] = *v.timeout_ms;
  if (v.usage) j["usage"] = encode(*v.usage);
  if (!v.batch_with.empty()) j["batchWith"] = v.batch_with;
  if (v.reader != "pi") j["reader"] = v.reader;
  return j;
}

cancel_params decode_cancel(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  cancel_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.child_ids = r.id_list("childIds", lim.max_child_ids, lim.max_id_bytes);
  return p;
}

json encode(const cancel_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["childIds"] = v.child_ids;
  return j;
}

cancel_request_params decode_cancel_request(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  const json* id = r.find("id");
  if (id == nullptr) r.fail("id", "required");
  if (id->is_string()) {
    r.id("id", lim.max_id_bytes);  // the caps of any id
  } else if (!id->is_number_integer() && !id->is_number_unsigned()) {
    r.fail("id", "expected a string or an integer");
  }
  return {*id};
}

parent_state_params decode_parent_state(const json& params, const wire_limits& lim) {
  field_reader r(params, "");
  parent_state_params p;
  p.parent_id = r.id("parentId", lim.max_id_bytes);
  p.state = r.one_of("state", {"busy", "idle"});
  return p;
}

json encode(const parent_state_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  j["state"] = v.state;
  return j;
}

artifact_read_params decode_artifact_read(const json& params, const wire_limits&) {
  field_reader r(params, "");
  artifact_read_params p;
  // Checked before it is copied: a wrong value may be large.
  if (const json* sha = r.find("sha256");
      sha && sha->is_string() && !is_sha256_hex(sha->get_ref<const std::string&>()))
    r.fail("sha256", "expected 64 lowercase hex digits");
  p.sha256 = r.string("sha256");
  p.offset = static_cast<std::size_t>(r.optional_integer("offset", 1).value_or(1));
  if (auto limit = r.optional_integer("limit", 1)) p.limit = static_cast<std::size_t>(*limit);
  return p;
}

json encode(const artifact_read_params& v) {
  json j = json::object();
  j["sha256"] = v.sha256;
  j["offset"] = v.offset;
  if (v.limit) j["limit"] = *v.limit;
  return j;
}

usage_request_params decode_usage_request(const json& params) {
  field_reader r(params, "");
  return usage_request_params{r.string("parentId")};
}

json encode(const usage_request_params& v) {
  json j = json::object();
  j["parentId"] = v.parent_id;
  return j;
}

}  // namespace handoff::rpc
