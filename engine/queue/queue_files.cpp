#include "engine/queue/queue_files.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string_view>
#include <utility>

#include "engine/fs/sha256.hpp"
#include "utf8.hpp"

namespace handoff {

namespace {

using json = nlohmann::json;

constexpr int format_version = 1;

// A field that is missing or of the wrong type; caught by the decoders.
struct bad_field : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const json& field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) throw bad_field(std::string("no \"") + key + "\"");
  return *it;
}

std::string text_field(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_string()) throw bad_field(std::string("\"") + key + "\" is not a string");
  return v.get<std::string>();
}

std::uint64_t seq_field(const json& v, const char* key) {
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() == 0) {
    throw bad_field(std::string("\"") + key + "\" is not a positive integer");
  }
  return v.get<std::uint64_t>();
}

std::int64_t time_field(const json& j, const char* key) {
  const json& v = field(j, key);
  if (!v.is_number_integer()) throw bad_field(std::string("\"") + key + "\" is not an integer");
  return v.get<std::int64_t>();
}

std::string hash_field(const json& j, const char* key) {
  std::string v = text_field(j, key);
  if (!is_sha256_hex(v)) throw bad_field(std::string("\"") + key + "\" is not a SHA-256");
  return v;
}

// Parses one of our objects and checks its format; the body decodes the fields.
template <typename T, typename Body>
std::optional<T> decode(std::string_view bytes, std::string& why, Body body) {
  const json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    why = "not valid JSON";
    return std::nullopt;
  }
  try {
    if (!j.is_object()) throw bad_field("not a JSON object");
    const json& format = field(j, "format");
    if (!format.is_number_integer() || format.get<int>() != format_version) {
      throw bad_field("unknown format " + format.dump());
    }
    return body(j);
  } catch (const bad_field& e) {
    why = e.what();
  } catch (const json::exception& e) {
    why = e.what();
  }
  return std::nullopt;
}

// dump() refuses invalid UTF-8 (type_error 316): a client string that cannot be stored as it is
// is refused rather than altered.
std::string dump(const json& j) {
  try {
    return j.dump();
  } catch (const json::type_error& e) {
    throw std::invalid_argument(std::string("cannot store a string that is not UTF-8: ") +
                                e.what());
  }
}

}  // namespace

std::string completion_key(std::string_view parent_id, std::string_view child_id) {
  sha256 h;
  h.update(parent_id);
  h.update(std::string_view("\0", 1));  // ids may contain anything but cannot be ambiguous
  h.update(child_id);
  return h.final_hex();
}

namespace {

json record_json(const held_result& r) {
  return {{"format", format_version},
          {"seq", r.seq},
          {"parent_id", r.info.parent_id},
          {"child_id", r.info.child_id},
          {"title", r.info.title},
          {"status", to_string(r.info.status)},
          {"error", r.info.error},
          {"sha256", r.sha256},
          {"completed_unix_ms", r.completed_unix_ms}};
}

held_result record_fields(const json& j) {
  held_result r;
  r.seq = seq_field(field(j, "seq"), "seq");
  r.info.parent_id = text_field(j, "parent_id");
  r.info.child_id = text_field(j, "child_id");
  r.info.title = text_field(j, "title");
  const auto status = parse_result_status(text_field(j, "status"));
  if (!status) throw bad_field("\"status\" is not done, error or cancelled");
  r.info.status = *status;
  r.info.error = text_field(j, "error");
  r.sha256 = hash_field(j, "sha256");
  r.completed_unix_ms = time_field(j, "completed_unix_ms");
  return r;
}

}  // namespace

std::string encode_put(const held_result& r, text_place where) {
  json j = record_json(r);
  j["text"] = where == text_place::in_journal ? "journal" : "file";
  return dump(j);
}

void check_storable(const held_result& r) {
  const std::pair<std::string_view, const std::string*> fields[] = {
      {"parent_id", &r.info.parent_id}, {"child_id", &r.info.child_id}, {"title", &r.info.title}, {"error", &r.info.error}};
  for (const auto& [name, value] : fields)
    if (!valid_utf8(*value))
      throw std::invalid_argument("cannot store a string that is not UTF-8: " + std::string(name));
}

std::string encode_retire(std::string_view key, const tombstone& t) {
  return dump({{"format", format_version},
               {"key", std::string(key)},
               {"seq", t.seq},
               {"sha256", t.sha256},
               {"done_unix_ms", t.done_unix_ms}});
}

std::string encode_mark(std::uint64_t next_seq) {
  return dump({{"format", format_version}, {"next_seq", next_seq}});
}

std::string encode_acknowledged(std::string_view delivery_id) {
  return dump({{"format", format_version}, {"delivery_id", std::string(delivery_id)}});
}

std::string encode_tombstone(const tombstone& t) {
  return dump({{"format", format_version},
               {"seq", t.seq},
               {"sha256", t.sha256},
               {"done_unix_ms", t.done_unix_ms}});
}

std::string encode_delivery(const stored_delivery& d) {
  return dump({{"format", format_version},
               {"parent_id", d.parent_id},
               {"delivery_id", d.delivery_id},
               {"seqs", d.seqs},
               {"payload", d.payload}});
}

std::optional<held_result> decode_record(std::string_view bytes, std::string& why) {
  return decode<held_result>(bytes, why, [](const json& j) { return record_fields(j); });
}

std::optional<decoded_put> decode_put(std::string_view bytes, std::string& why) {
  return decode<decoded_put>(bytes, why, [](const json& j) {
    const std::string place = text_field(j, "text");
    if (place != "journal" && place != "file") throw bad_field("\"text\" is not journal or file");
    return decoded_put{record_fields(j), place == "journal" ? text_place::in_journal : text_place::in_file};
  });
}

std::optional<decoded_retire> decode_retire(std::string_view bytes, std::string& why) {
  return decode<decoded_retire>(bytes, why, [](const json& j) {
    decoded_retire r;
    r.key = hash_field(j, "key");
    r.t.seq = seq_field(field(j, "seq"), "seq");
    r.t.sha256 = hash_field(j, "sha256");
    r.t.done_unix_ms = time_field(j, "done_unix_ms");
    return r;
  });
}

std::optional<std::uint64_t> decode_mark(std::string_view bytes, std::string& why) {
  return decode<std::uint64_t>(bytes, why, [](const json& j) { return seq_field(field(j, "next_seq"), "next_seq"); });
}

std::optional<std::string> decode_acknowledged(std::string_view bytes, std::string& why) {
  return decode<std::string>(bytes, why, [](const json& j) { return text_field(j, "delivery_id"); });
}

std::optional<tombstone> decode_tombstone(std::string_view bytes, std::string& why) {
  return decode<tombstone>(bytes, why, [](const json& j) {
    tombstone t;
    t.seq = seq_field(field(j, "seq"), "seq");
    t.sha256 = hash_field(j, "sha256");
    t.done_unix_ms = time_field(j, "done_unix_ms");
    return t;
  });
}

std::optional<stored_delivery> decode_delivery(std::string_view bytes, std::string& why) {
  return decode<stored_delivery>(bytes, why, [](const json& j) {
    stored_delivery d;
    d.parent_id = text_field(j, "parent_id");
    d.delivery_id = text_field(j, "delivery_id");
    const json& seqs = field(j, "seqs");
    if (!seqs.is_array()) throw bad_field("\"seqs\" is not an array");
    for (const json& s : seqs) d.seqs.push_back(seq_field(s, "seqs"));
    d.payload = text_field(j, "payload");
    return d;
  });
}

}  // namespace handoff
