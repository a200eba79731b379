// Reading the members of one JSON object that came from a peer. Every failure throws
// rpc_error{errc::invalid_params} whose message starts with the member's path, the way a
// client writer would spell it: "parentId: required", "childIds[2]: expected a string",
// "sections[0].artifact.sha256: expected a string". The path is also in the error's data as
// {"field": path}.
//
// Absent members and members set to null are the same thing for optional fields (TypeScript
// clients write either). Unknown members are ignored, so newer peers can add fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

class field_reader {
 public:
  // `path` is the object's own path ("usage", "sections[3]"), or "" for the top level, whose
  // members are named bare ("parentId") and which is called `top` itself ("params" or
  // "result"). It must be a JSON object ("params: expected an object" otherwise).
  field_reader(const nlohmann::json& object, std::string path, std::string_view top = "params");

  // Member `key` when present and not null, else nullptr.
  const nlohmann::json* find(std::string_view key) const;
  // Member `key` is there, even as null.
  bool has(std::string_view key) const { return object_.contains(key); }
  // The member's path, for messages and nested readers: "usage.tokens", "childIds".
  std::string path_of(std::string_view key) const;
  [[noreturn]] void fail(std::string_view key, std::string_view what) const;

  // A string of at most max_bytes bytes (UTF-8, as the parser checked).
  std::string string(std::string_view key, std::size_t max_bytes = unlimited) const;
  // The same checks without the copy: afterwards the member is a string the caller may move.
  void check_string(std::string_view key, std::size_t max_bytes = unlimited) const;
  std::optional<std::string> optional_string(std::string_view key,
                                             std::size_t max_bytes = unlimited) const;
  // One of a closed set of strings ("done", "error", "cancelled").
  std::string one_of(std::string_view key, std::span<const std::string_view> allowed) const;
  // An identifier: 1..max_bytes bytes, no control characters (C0, DEL, C1).
  std::string id(std::string_view key, std::size_t max_bytes) const;
  std::optional<std::string> optional_id(std::string_view key, std::size_t max_bytes) const;
  // An array of 1..max_count unique identifiers.
  std::vector<std::string> id_list(std::string_view key, std::size_t max_count,
                                   std::size_t max_bytes) const;
  // An array of strings (no caps; for results the daemon wrote).
  std::vector<std::string> string_list(std::string_view key) const;

  // An integer in [min, max]; fractions such as 1.5 are refused, and so is 1.0 (JSON writers
  // print integral numbers without a fraction).
  std::int64_t integer(std::string_view key, std::int64_t min = 0,
                       std::int64_t max = max_int) const;
  std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t min = 0,
                                               std::int64_t max = max_int) const;
  // A count or size: an integer >= 0.
  std::size_t count(std::string_view key) const;
  std::optional<std::size_t> optional_count(std::string_view key) const;
  bool boolean(std::string_view key) const;
  // Any JSON number.
  double number(std::string_view key) const;
  std::optional<double> optional_number(std::string_view key) const;
  // A nested object or array (required).
  const nlohmann::json& object(std::string_view key) const;
  const nlohmann::json& array(std::string_view key) const;

  static constexpr std::size_t unlimited = std::numeric_limits<std::size_t>::max();
  static constexpr std::int64_t max_int = std::numeric_limits<std::int64_t>::max();

 private:
  const nlohmann::json& required(std::string_view key) const;

  const nlohmann::json& object_;
  std::string path_;
};

// Checks an identifier (1..max_bytes bytes, no control characters); returns what is wrong, or
// an empty string when it is fine.
std::string id_problem(std::string_view id, std::size_t max_bytes);

// Throws rpc_error{invalid_params}: "<path>: <what>" ("usage.tokens: expected a number").
[[noreturn]] void throw_invalid(const std::string& path, std::string_view what);

}  // namespace handoff::rpc
