#include "protocol/field_reader.hpp"

#include <utility>

#include "protocol/jsonrpc.hpp"

namespace handoff::rpc {

void throw_invalid(const std::string& path, std::string_view what) {
  throw rpc_error(errc::invalid_params, path + ": " + std::string(what), json{{"field", path}});
}

std::string id_problem(std::string_view id, std::size_t max_bytes) {
  if (id.empty()) return "must not be empty";
  if (id.size() > max_bytes) return "longer than " + std::to_string(max_bytes) + " bytes";
  for (std::size_t i = 0; i < id.size(); ++i) {
    const auto c = static_cast<unsigned char>(id[i]);
    const bool c0_or_del = c < 0x20 || c == 0x7f;
    const bool c1 =
        c == 0xc2 && i + 1 < id.size() && (static_cast<unsigned char>(id[i + 1]) & 0xe0) == 0x80;
    if (c0_or_del || c1) return "contains a control character";
  }
  return {};
}

namespace {

std::string range_text(bool too_small, std::int64_t min, std::int64_t max) {
  if (max != field_reader::max_int)
    return "must be between " + std::to_string(min) + " and " + std::to_string(max);
  return too_small ? "must be >= " + std::to_string(min) : "too large";
}

}  // namespace

field_reader::field_reader(const json& object, std::string path, std::string_view top)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object())
    throw_invalid(path_.empty() ? std::string(top) : path_, "expected an object");
}

const json* field_reader::find(std::string_view key) const {
  const auto it = object_.find(key);
  return it == object_.end() || it->is_null() ? nullptr : &*it;
}

std::string field_reader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void field_reader::fail(std::string_view key, std::string_view what) const {
  throw_invalid(path_of(key), what);
}

const json& field_reader::required(std::string_view key) const {
  const json* v = find(key);
  if (v == nullptr) fail(key, "required");
  return *v;
}

std::string field_reader::string(std::string_view key, std::size_t max_bytes) const {
  check_string(key, max_bytes);
  return required(key).get_ref<const std::string&>();
}

void field_reader::check_string(std::string_view key, std::size_t max_bytes) const {
  const json& v = required(key);
  if (!v.is_string()) fail(key, "expected a string");
  if (v.get_ref<const std::string&>().size() > max_bytes)
    fail(key, "longer than " + std::to_string(max_bytes) + " bytes");
}

std::optional<std::string> field_reader::optional_string(std::string_view key,
                                                         std::size_t max_bytes) const {
  if (find(key) == nullptr) return std::nullopt;
  return string(key, max_bytes);
}

std::string field_reader::one_of(std::string_view key,
                                 std::span<const std::string_view> allowed) const {
  std::string s = string(key);
  for (std::string_view a : allowed)
    if (s == a) return s;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(a) + "\"";
  fail(key, "expected one of " + list);
}

std::string field_reader::id(std::string_view key, std::size_t max_bytes) const {
  std::string s = string(key);
  if (auto problem = id_problem(s, max_bytes); !problem.empty()) fail(key, problem);
  return s;
}

std::optional<std::string> field_reader::optional_id(std::string_view key,
                                                     std::size_t max_bytes) const {
  if (find(key) == nullptr) return std::nullopt;
  return id(key, max_bytes);
}

std::vector<std::string> field_reader::id_list(std::string_view key, std::size_t max_count,
                                               std::size_t max_bytes) const {
  const json& list = array(key);
  if (list.empty()) fail(key, "expected at least one id");
  if (list.size() > max_count) fail(key, "more than " + std::to_string(max_count) + " ids");
  const std::string path = path_of(key);
  auto element = [&path](std::size_t i) { return path + "[" + std::to_string(i) + "]"; };
  std::vector<std::string> ids;
  ids.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) throw_invalid(element(i), "expected a string");
    const auto& s = list[i].get_ref<const std::string&>();
    if (auto problem = id_problem(s, max_bytes); !problem.empty())
      throw_invalid(element(i), problem);
    for (std::size_t j = 0; j < i; ++j)  // at most 64 ids: quadratic is cheapest
      if (ids[j] == s) throw_invalid(element(i), "duplicate of " + element(j));
    ids.push_back(s);
  }
  return ids;
}

std::vector<std::string> field_reader::string_list(std::string_view key) const {
  const json& list = array(key);
  std::vector<std::string> out;
  out.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      throw_invalid(path_of(key) + "[" + std::to_string(i) + "]", "expected a string");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

std::int64_t field_reader::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const json& v = required(key);
  if (!v.is_number_integer()) fail(key, "expected an integer");
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(max)) fail(key, range_text(false, min, max));
    if (static_cast<std::int64_t>(u) < min) fail(key, range_text(true, min, max));
    return static_cast<std::int64_t>(u);
  }
  const auto i = v.get<std::int64_t>();
  if (i < min || i > max) fail(key, range_text(i < min, min, max));
  return i;
}

std::optional<std::int64_t> field_reader::optional_integer(std::string_view key, std::int64_t min,
                                                           std::int64_t max) const {
  if (find(key) == nullptr) return std::nullopt;
  return integer(key, min, max);
}

std::size_t field_reader::count(std::string_view key) const {
  return static_cast<std::size_t>(integer(key));
}

std::optional<std::size_t> field_reader::optional_count(std::string_view key) const {
  if (find(key) == nullptr) return std::nullopt;
  return count(key);
}

bool field_reader::boolean(std::string_view key) const {
  const json& v = required(key);
  if (!v.is_boolean()) fail(key, "expected true or false");
  return v.get<bool>();
}

double field_reader::number(std::string_view key) const {
  const json& v = required(key);
  if (!v.is_number()) fail(key, "expected a number");
  return v.get<double>();
}

std::optional<double> field_reader::optional_number(std::string_view key) const {
  if (find(key) == nullptr) return std::nullopt;
  return number(key);
}

const json& field_reader::object(std::string_view key) const {
  const json& v = required(key);
  if (!v.is_object()) fail(key, "expected an object");
  return v;
}

const json& field_reader::array(std::string_view key) const {
  const json& v = required(key);
  if (!v.is_array()) fail(key, "expected an array");
  return v;
}

}  // namespace handoff::rpc
