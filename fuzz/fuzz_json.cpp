// The project's JSON parser and writer against nlohmann's, on the same bytes (differential).
//
// protocol/json_fast_path.* parses the documents we receive and protocol/json_dump.* writes the
// ones we send, both faster than nlohmann for long strings; they must never disagree with it:
//   parse_json(text, cap) succeeds exactly when nlohmann accepts the text and its nesting is at
//   most `cap`, and then builds the same value with the same number types;
//   append_json(v) writes byte for byte what v.dump() writes, or declines (returning false and
//   leaving the output as it was) exactly when dump() would throw on invalid UTF-8, and
//   append_json_string(s) does the same as append_json(json(s)).
// Input: byte 0 picks the depth cap (1..64), the rest is the text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "protocol/json_dump.hpp"
#include "protocol/json_parse.hpp"

namespace {

using nlohmann::json;

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_json: invariant broken: %s\n", what);
  std::abort();
}

// Brackets open at the deepest point: a scalar is 0, [] is 1, [[1]] is 2.
std::size_t depth(const json& v) {
  if (!v.is_structured()) return 0;
  std::size_t deepest = 0;
  for (const auto& item : v) deepest = std::max(deepest, depth(item));
  return deepest + 1;
}

// Equal values with equal types all the way down (1 and 1u and 1.0 compare equal in nlohmann).
bool same(const json& a, const json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case json::value_t::array: {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i)
        if (!same(a[i], b[i])) return false;
      return true;
    }
    case json::value_t::object: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        auto other = b.find(it.key());
        if (other == b.end() || !same(it.value(), *other)) return false;
      }
      return true;
    }
    case json::value_t::number_float: {
      const double x = a.get<double>(), y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;  // bit for bit: the same conversion
    }
    default: return a == b;
  }
}

void check_writer(const json& value) {
  std::string out = "prefix";
  const bool wrote = handoff::rpc::append_json(out, value);
  try {
    const std::string reference = value.dump();
    require(wrote, "append_json declined a value dump() writes");
    require(out == "prefix" + reference, "append_json wrote other bytes than dump()");
  } catch (const json::type_error&) {
    require(!wrote, "append_json wrote a value dump() refuses");
    require(out == "prefix", "append_json changed the output when it declined");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t cap = 1 + data[0] % 64;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

  const json reference = json::parse(text.begin(), text.end(), nullptr, false);
  bool parsed = false;
  json ours;
  try {
    ours = handoff::rpc::parse_json(text, cap);
    parsed = true;
  } catch (const handoff::rpc::json_parse_error&) {
    // the parser's own error type: any other exception escapes and crashes the fuzzer
  }
  if (reference.is_discarded()) {
    require(!parsed, "parse_json accepted a text nlohmann refuses");
  } else if (depth(reference) > cap) {
    require(!parsed, "parse_json accepted nesting deeper than its cap");
  } else {
    require(parsed, "parse_json refused a text nlohmann accepts within the cap");
    require(same(ours, reference), "parse_json built another value than nlohmann");
    check_writer(ours);
  }
  // The writer on a string of raw bytes: valid UTF-8 or not, escapes and all; and the same
  // string written straight from its bytes (append_json_string, the client's finalText).
  check_writer(json(std::string(text)));
  std::string as_value = "prefix", as_bytes = "prefix";
  const bool wrote_value = handoff::rpc::append_json(as_value, json(std::string(text)));
  require(handoff::rpc::append_json_string(as_bytes, text) == wrote_value, "append_json_string declined otherwise");
  require(as_bytes == as_value, "append_json_string wrote other bytes than append_json");
  return 0;
}
