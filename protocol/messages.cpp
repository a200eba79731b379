// The shapes several methods share: usage, artifact, section, budget, batch. Each encoder and
// its decoder sit together so that the wire form can be checked against itself. Optional
// values are written as null (so every member is always present), except a section's `error`,
// which is left out when there is none.
#include "protocol/messages.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "protocol/field_reader.hpp"

namespace handoff::rpc {
namespace {

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

// An integer >= min from any JSON number, rounded down: Pi's token counts are integers, but
// they are JavaScript numbers and nothing stops an adapter from sending 1234.5.
std::int64_t whole_number(const field_reader& r, std::string_view key, std::int64_t min) {
  const double v = r.number(key);
  if (r.find(key)->is_number_integer()) return r.integer(key, min);
  const double floored = std::floor(v);
  // 2^63 is the first double past int64's range.
  if (!(floored >= static_cast<double>(min) && floored < 9223372036854775808.0))
    r.fail(key, "must be >= " + std::to_string(min));
  return static_cast<std::int64_t>(floored);
}

artifact_dto read_artifact(const json& j, std::string path) {
  field_reader r(j, std::move(path));
  artifact_dto a;
  a.saved = r.boolean("saved");
  a.sha256 = r.string("sha256");
  if (a.saved)
    a.path = r.string("path");
  else
    a.reason = r.optional_string("reason").value_or("");
  return a;
}

section_dto read_section(const json& j, std::string path) {
  field_reader r(j, std::move(path));
  section_dto s;
  s.child_id = r.string("childId");
  s.title = r.string("title");
  s.status = r.string("status");
  s.error = r.optional_string("error").value_or("");
  s.text = r.string("text");
  s.truncated = r.boolean("truncated");
  s.total_bytes = r.count("totalBytes");
  s.total_lines = r.count("totalLines");
  if (r.find("omitted") != nullptr) {
    field_reader omitted(r.object("omitted"), r.path_of("omitted"));
    s.omitted_offset = omitted.count("offset");
    s.omitted_limit = omitted.count("limit");
  }
  if (r.find("artifact") != nullptr)
    s.artifact = read_artifact(r.object("artifact"), r.path_of("artifact"));
  return s;
}

budget_dto read_budget(const json& j, std::string path) {
  field_reader r(j, std::move(path));
  budget_dto b;
  b.mode = r.string("mode");
  b.basis = r.string("basis");
  b.batch_cap_bytes = r.count("batchCapBytes");
  b.static_batch_bytes = r.count("staticBatchBytes");
  b.per_result_bytes = r.count("perResultBytes");
  b.floor_bytes = r.count("floorBytes");
  b.max_lines = r.count("maxLines");
  if (r.find("usage") != nullptr) b.usage = decode_usage(r.object("usage"), r.path_of("usage"));
  b.headroom_bytes = r.optional_count("headroomBytes");
  return b;
}

}  // namespace

usage_dto decode_usage(const json& j, std::string_view where) {
  field_reader r(j, std::string(where));
  usage_dto u;
  if (r.find("tokens") != nullptr) u.tokens = whole_number(r, "tokens", 0);
  // Any value is accepted: Pi reports windows it does not know as 0 or less, and the budget
  // treats those as "usage unknown".
  u.context_window = whole_number(r, "contextWindow", std::numeric_limits<std::int64_t>::min());
  u.percent = r.optional_number("percent");
  return u;
}

json encode(const usage_dto& v) {
  json j = json::object();
  j["tokens"] = or_null(v.tokens);
  j["contextWindow"] = v.context_window;
  j["percent"] = or_null(v.percent);
  return j;
}

json encode(const artifact_dto& v) {
  json j = json::object();
  j["saved"] = v.saved;
  if (v.saved) j["path"] = v.path;
  j["sha256"] = v.sha256;
  if (!v.saved) j["reason"] = v.reason;
  return j;
}

json encode(const section_dto& v) {
  json j = json::object();
  j["childId"] = v.child_id;
  j["title"] = v.title;
  j["status"] = v.status;
  if (!v.error.empty()) j["error"] = v.error;
  j["text"] = v.text;
  j["truncated"] = v.truncated;
  j["totalBytes"] = v.total_bytes;
  j["totalLines"] = v.total_lines;
  j["omitted"] = v.omitted_offset && v.omitted_limit
                     ? json{{"offset", *v.omitted_offset}, {"limit", *v.omitted_limit}}
                     : json();
  j["artifact"] = v.artifact ? encode(*v.artifact) : json();
  return j;
}

section_dto decode_section(const json& j) { return read_section(j, "section"); }

json encode(const budget_dto& v) {
  json j = json::object();
  j["mode"] = v.mode;
  j["basis"] = v.basis;
  j["batchCapBytes"] = v.batch_cap_bytes;
  j["staticBatchBytes"] = v.static_batch_bytes;
  j["perResultBytes"] = v.per_result_bytes;
  j["floorBytes"] = v.floor_bytes;
  j["maxLines"] = v.max_lines;
  j["usage"] = v.usage ? encode(*v.usage) : json();
  j["headroomBytes"] = or_null(v.headroom_bytes);
  return j;
}

json encode(const batch_dto& v) {
  json sections = json::array();
  for (const auto& s : v.sections) sections.push_back(encode(s));
  json j = json::object();
  j["sections"] = std::move(sections);
  j["text"] = v.text;
  j["deferred"] = v.deferred;
  j["budget"] = encode(v.budget);
  return j;
}

batch_dto decode_batch(const json& j) {
  field_reader r(j, "", "result");
  batch_dto b;
  const json& sections = r.array("sections");
  b.sections.reserve(sections.size());
  for (std::size_t i = 0; i < sections.size(); ++i)
    b.sections.push_back(read_section(sections[i], "sections[" + std::to_string(i) + "]"));
  b.text = r.string("text");
  b.deferred = r.count("deferred");
  b.budget = read_budget(r.object("budget"), "budget");
  return b;
}

}  // namespace handoff::rpc
