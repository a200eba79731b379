// The rules of the wire structs that a field list does not say (messages.hpp): usage's whole
// numbers, an artifact's members that depend on `saved`, a section's omitted range, the id of
// $/cancelRequest, artifact/read's sha256.
#include "protocol/messages.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "protocol/field_reader.hpp"

namespace handoff::rpc::wire {

std::int64_t shape<usage_dto>::whole_number::read(const field_reader& r, std::string_view key,
                                                   const context&) const {
  const double v = r.number(key);
  if (r.find(key)->is_number_integer()) return r.integer(key, min);
  const double floored = std::floor(v);
  // 2^63 is the first double past int64's range.
  if (!(floored >= static_cast<double>(min) && floored < 9223372036854775808.0))
    r.fail(key, "must be >= " + std::to_string(min));
  return static_cast<std::int64_t>(floored);
}

void shape<artifact_dto>::read(const field_reader& r, artifact_dto& out, const context&) {
  out.saved = r.boolean("saved");
  out.sha256 = r.string("sha256");
  if (out.saved)
    out.path = r.string("path");
  else
    out.reason = r.optional_string("reason").value_or("");
}

void shape<artifact_dto>::write(const artifact_dto& v, json& j) {
  j["saved"] = v.saved;
  if (v.saved) j["path"] = v.path;
  j["sha256"] = v.sha256;
  if (!v.saved) j["reason"] = v.reason;
}

void shape<section_dto>::omitted_range::read(const field_reader& r, section_dto& out, const context&) const {
  if (r.find(name) == nullptr) return;
  const field_reader omitted(r.object(name), r.path_of(name));
  out.omitted_offset = omitted.count("offset");
  out.omitted_limit = omitted.count("limit");
}

void shape<section_dto>::omitted_range::write(const section_dto& v, json& j) const {
  j[std::string(name)] = v.omitted_offset && v.omitted_limit
                             ? json{{"offset", *v.omitted_offset}, {"limit", *v.omitted_limit}}
                             : json();
}

void shape<section_dto>::omitted_range::describe(json& out) const {
  const json count_type = std::string(count.kind);
  auto member = [&](std::string_view member_name) {
    return json{{"name", member_name}, {"type", count_type}, {"optional", false}, {"nullable", false}};
  };
  out.push_back({{"name", name},
                 {"type", {{"object", {member("offset"), member("limit")}}}},
                 {"optional", true},
                 {"nullable", true}});
}

void shape<cancel_request_params>::read(const field_reader& r, cancel_request_params& out, const context& c) {
  const json* given = r.find("id");
  if (given == nullptr) r.fail("id", "required");
  if (given->is_string()) {
    r.id("id", c.lim.max_id_bytes);  // the caps of any id
  } else if (!given->is_number_integer() && !given->is_number_unsigned()) {
    r.fail("id", "expected a string or an integer");
  }
  out.id = *given;
}

void shape<cancel_request_params>::write(const cancel_request_params& v, json& j) { j["id"] = v.id; }

std::string shape<artifact_read_params>::sha256_hex::read(const field_reader& r, std::string_view key,
                                                         const context&) const {
  const auto is_hex = [](std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char ch) {
             return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
           });
  };
  if (const json* sha = r.find(key); sha && sha->is_string() && !is_hex(sha->get_ref<const std::string&>()))
    r.fail(key, "expected 64 lowercase hex digits");
  return r.string(key);
}

}  // namespace handoff::rpc::wire

namespace handoff::rpc {

json encode_without_final_text(const completed_params& v) {
  json j = json::object();
  std::apply([&](const auto&... f) { ((f.name != "finalText" ? f.write(v, j) : void()), ...); },
             wire::shape<completed_params>::fields);
  return j;
}

}  // namespace handoff::rpc
