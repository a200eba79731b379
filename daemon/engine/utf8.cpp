// UTF-8 validation and cut positions.
//
// valid_utf8 follows the well-formed byte sequences of Unicode 15, table 3-7: every
// sequence is checked on its lead byte's allowed range for the second byte, which rules out
// overlongs (E0 80..9F, F0 80..8F), surrogates (ED A0..BF) and code points above U+10FFFF
// (F4 90..BF, F5..FF). ASCII runs, the common case in agent reports, are skipped eight
// bytes at a time.
#include "engine/utf8.hpp"

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
    const unsigned char lead = *p;
    if (lead < 0x80U) {
      ++p;
      continue;
    }
    std::size_t length = 0;
    unsigned char second_min = 0x80U;
    unsigned char second_max = 0xBFU;
    if (lead >= 0xC2U && lead <= 0xDFU) {
      length = 2;
    } else if (lead >= 0xE0U && lead <= 0xEFU) {
      length = 3;
      if (lead == 0xE0U) second_min = 0xA0U;  // overlong below U+0800
      if (lead == 0xEDU) second_max = 0x9FU;  // surrogates U+D800..U+DFFF
    } else if (lead >= 0xF0U && lead <= 0xF4U) {
      length = 4;
      if (lead == 0xF0U) second_min = 0x90U;  // overlong below U+10000
      if (lead == 0xF4U) second_max = 0x8FU;  // above U+10FFFF
    } else {
      return false;  // stray continuation byte, C0/C1 overlong lead, or F5..FF
    }
    if (static_cast<std::size_t>(end - p) < length) return false;
    if (p[1] < second_min || p[1] > second_max) return false;
    for (std::size_t i = 2; i < length; ++i) {
      if (!is_continuation(p[i])) return false;
    }
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

}  // namespace handoff
