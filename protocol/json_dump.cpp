#include "protocol/json_dump.hpp"

#include <cstdint>
#include <cstring>
#include <string_view>

#include "utf8.hpp"

namespace handoff::rpc {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t ones = 0x0101010101010101ULL;
constexpr std::uint64_t highs = 0x8080808080808080ULL;

// True when one of the 8 bytes of `w` is not copied as is: '"', '\\', a control byte or a
// non-ASCII byte (checked as UTF-8). Exact for "any of the 8".
constexpr bool has_special(std::uint64_t w) noexcept {
  const std::uint64_t quote = w ^ (ones * '"');
  const std::uint64_t backslash = w ^ (ones * '\\');
  const std::uint64_t special = ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) |
                                ((w - ones * 0x20) & ~w) | w;
  return (special & highs) != 0;
}

constexpr bool is_plain(unsigned char c) noexcept { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// nlohmann's escapes with ensure_ascii off: short forms for \b \t \n \f \r \" \\, \u00xx
// (lowercase hex) for the other control bytes, everything else as is.
bool append_string(std::string& out, std::string_view s) {
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p != end) {
    const auto* run = p;
    while (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      if (has_special(w)) break;
      p += 8;
    }
    while (p != end && is_plain(*p)) ++p;
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(p - run));
    if (p == end) break;
    const unsigned char c = *p;
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(p, end);
      if (n == 0) return false;
      out.append(reinterpret_cast<const char*>(p), n);
      p += n;
      continue;
    }
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
    ++p;
  }
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
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      out += v.dump();  // nlohmann's own number formatting (shortest round trip for doubles)
      return true;
    default:
      return false;  // binary, discarded: nlohmann's business
  }
}

}  // namespace

bool append_json(std::string& out, const nlohmann::json& value) {
  const std::size_t size = out.size();
  if (append_value(out, value)) return true;
  out.resize(size);
  return false;
}

}  // namespace handoff::rpc
