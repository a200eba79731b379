// A fast writer of compact JSON text for nlohmann::json values, byte for byte what
// value.dump() writes (same escapes, same key order, numbers written by nlohmann itself), for
// messages that carry long strings: nlohmann's serializer decodes and re-checks each byte of a
// string (a 1 MiB finalText takes several ms); this finds the bytes to escape 16 at a time
// (json_scan.hpp) and copies the runs between them whole.
#pragma once

#include <charconv>
#include <concepts>
#include <iterator>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace handoff::rpc {

// Appends the compact JSON of `value` to `out` and returns true, or returns false with `out`
// as it was when a string in `value` is not valid UTF-8 (or the value is binary or discarded):
// the caller then uses nlohmann's dump() with the error handling it wants.
bool append_json(std::string& out, const nlohmann::json& value);

// The same for one string straight from the caller's bytes (a final text need not be copied
// into a json first): appends it quoted and escaped, or returns false with `out` as it was when
// it is not valid UTF-8.
bool append_json_string(std::string& out, std::string_view s);

// The same without the quotes: what goes between them. A string cut on character boundaries
// (utf8_floor) and escaped piece by piece gives exactly the pieces of append_json_string's
// output, so a long text can be sent as it is escaped.
bool append_json_escaped(std::string& out, std::string_view s);

// For values we send: as append_json / append_json_string, and when a string is not valid UTF-8
// it is written as nlohmann's dump() with error_handler_t::replace writes it (U+FFFD for each bad
// byte) instead of being refused.
void append_json_replacing(std::string& out, const nlohmann::json& value);
void append_json_string_replacing(std::string& out, std::string_view s);

// An integer as nlohmann writes it: plain decimal, '-' when negative.
template <std::integral Integer>
void append_json_integer(std::string& out, Integer n) {
  char digits[24];
  const auto written = std::to_chars(std::begin(digits), std::end(digits), n);
  out.append(digits, written.ptr);
}

}  // namespace handoff::rpc
