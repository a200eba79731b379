#include "protocol/json_dump.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <string_view>

#include "protocol/json_scan.hpp"
#include "utf8.hpp"

namespace handoff::rpc {
namespace {

using json = nlohmann::json;

// Room reserved up front for a long string's escapes, as a share of its length (a report
// escapes a '\n' or a '"' every few dozen bytes); more escapes than that grow `out` as usual.
constexpr std::size_t escape_slack_divisor = 16;

// Makes room for at least `more` bytes after `out`'s end, growing geometrically.
void reserve_more(std::string& out, std::size_t more) {
  if (out.capacity() - out.size() >= more) return;
  out.reserve(std::max(out.size() + more, 2 * out.capacity()));
}

// nlohmann's escapes with ensure_ascii off: short forms for \b \t \n \f \r \" \\, \u00xx
// (lowercase hex) for the other control bytes, everything else as is. No quotes.
bool append_escaped(std::string& out, std::string_view s) {
  reserve_more(out, s.size() + s.size() / escape_slack_divisor + 2);
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  const auto* run = p;  // plain bytes and valid UTF-8 not appended yet
  for (;;) {
    p = skip_plain(p, end);
    if (p == end) break;
    const unsigned char c = *p;
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(p, end);
      if (n == 0) return false;
      p += n;
      continue;
    }
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default: {
        static constexpr char hex[] = "0123456789abcdef";
        const char escaped[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        out.append(escaped, sizeof escaped);
      }
    }
    run = ++p;
  }
  out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
  return true;
}

bool append_string(std::string& out, std::string_view s) {
  out += '"';
  if (!append_escaped(out, s)) return false;
  out += '"';
  return true;
}

bool append_value(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, member] : v.get_ref<const json::object_t&>()) {
        if (!first) out += ',';
        first = false;
        if (!append_string(out, key)) return false;
        out += ':';
        if (!append_value(out, member)) return false;
      }
      out += '}';
      return true;
    }
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : v.get_ref<const json::array_t&>()) {
        if (!first) out += ',';
        first = false;
        if (!append_value(out, item)) return false;
      }
      out += ']';
      return true;
    }
    case json::value_t::string:
      return append_string(out, v.get_ref<const std::string&>());
    case json::value_t::null:
      out += "null";
      return true;
    case json::value_t::boolean:
      out += v.get<bool>() ? "true" : "false";
      return true;
    case json::value_t::number_integer:
      append_json_integer(out, v.get_ref<const json::number_integer_t&>());
      return true;
    case json::value_t::number_unsigned:
      append_json_integer(out, v.get_ref<const json::number_unsigned_t&>());
      return true;
    case json::value_t::number_float:
      out += v.dump();  // nlohmann's own formatting (shortest round trip, its rules for NaN/inf)
      return true;
    default:
      return false;  // binary, discarded: nlohmann's business
  }
}

}  // namespace

bool append_json_string(std::string& out, std::string_view s) {
  const std::size_t size = out.size();
  if (append_string(out, s)) return true;
  out.resize(size);
  return false;
}

bool append_json_escaped(std::string& out, std::string_view s) {
  const std::size_t size = out.size();
  if (append_escaped(out, s)) return true;
  out.resize(size);
  return false;
}

bool append_json(std::string& out, const nlohmann::json& value) {
  const std::size_t size = out.size();
  if (append_value(out, value)) return true;
  out.resize(size);
  return false;
}

void append_json_replacing(std::string& out, const nlohmann::json& value) {
  if (append_json(out, value)) return;
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void append_json_string_replacing(std::string& out, std::string_view s) {
  if (!append_json_string(out, s)) append_json_replacing(out, json(s));
}

}  // namespace handoff::rpc
