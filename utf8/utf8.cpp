// valid_utf8, the cut positions and append_utf8 (utf8.hpp). ASCII runs, the common case in
// agent reports, are skipped eight bytes at a time; every other character goes through the one
// table, utf8_sequence_length.
#include "utf8.hpp"

#include <cstdint>
#include <cstring>

namespace handoff {
namespace {

constexpr bool is_continuation(unsigned char b) noexcept { return (b & 0xC0U) == 0x80U; }

bool continuation_at(std::string_view s, std::size_t i) noexcept {
  return is_continuation(static_cast<unsigned char>(s[i]));
}

// Longest run of continuation bytes a valid sequence has; a cut helper looks no further, so
// it stays O(1) on invalid input too.
constexpr std::size_t max_continuation_bytes = 3;

constexpr std::uint64_t high_bits = 0x8080808080808080ULL;

}  // namespace

bool valid_utf8(std::string_view s) noexcept {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char* const end = p + s.size();
  while (p < end) {
    if (end - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, sizeof word);
      if ((word & high_bits) == 0) {
        p += 8;
        continue;
      }
    }
    if (*p < 0x80U) {
      ++p;
      continue;
    }
    const std::size_t length = utf8_sequence_length(p, end);
    if (length == 0) return false;
    p += length;
  }
  return true;
}

std::size_t utf8_floor(std::string_view s, std::size_t n) noexcept {
  if (n >= s.size()) return s.size();
  std::size_t cut = n;
  for (std::size_t steps = 0; steps < max_continuation_bytes && cut > 0 && continuation_at(s, cut);
       ++steps) {
    --cut;
  }
  // Valid text stops on a lead byte. A longer run of continuation bytes is not a character
  // there is anything to protect of, so the requested cut stands.
  return continuation_at(s, cut) ? n : cut;
}

std::size_t utf8_ceil(std::string_view s, std::size_t n) noexcept {
  if (n >= s.size()) return s.size();
  std::size_t cut = n;
  for (std::size_t steps = 0;
       steps < max_continuation_bytes && cut < s.size() && continuation_at(s, cut); ++steps) {
    ++cut;
  }
  return cut < s.size() && continuation_at(s, cut) ? n : cut;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace handoff
