// UTF-8, in one place: which byte sequences are well-formed, and where text may be cut without
// splitting a character.
//
// Well-formed means the sequences of Unicode 15, table 3-7 (the same as RFC 3629): each lead
// byte allows a range for the second byte, which rules out overlongs (C0, C1, E0 80..9F,
// F0 80..8F), UTF-16 surrogates (ED A0..BF) and code points above U+10FFFF (F4 90..BF, F5..FF).
//
// This library sits below both the protocol and the engine, which must not include each other:
// the JSON fast paths (protocol/json_fast_path.cpp, json_dump.cpp) check each non-ASCII
// character with utf8_sequence_length, inline in their loops; the engine cuts text with
// utf8_floor and utf8_ceil; the tests and fuzzers check results with valid_utf8. The decoders of
// escapes (\uXXXX in JSON, \u and \U in TOML) write the code point with append_utf8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace handoff {

// Length (2..4) of the well-formed UTF-8 sequence starting at `p`, or 0 when there is none
// before `end`. Requires p < end and *p >= 0x80 (ASCII is the caller's fast path). Inline: it
// runs once per non-ASCII character inside the JSON parser's and writer's string loops.
inline std::size_t utf8_sequence_length(const unsigned char* p, const unsigned char* end) noexcept {
  const unsigned char b0 = p[0];
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong below U+0800
    if (b0 == 0xED) hi = 0x9F;  // surrogates U+D800..U+DFFF
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong below U+10000
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // stray continuation byte, C0/C1 overlong lead, or F5..FF
  }
  if (static_cast<std::size_t>(end - p) < n || p[1] < lo || p[1] > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (p[i] < 0x80 || p[i] > 0xBF) return 0;
  return n;
}

// True when `s` is well-formed UTF-8 throughout.
bool valid_utf8(std::string_view s) noexcept;

// Largest cut position <= n (and <= s.size()) that is not inside a UTF-8 sequence:
// s.substr(0, result) ends on a whole character.
std::size_t utf8_floor(std::string_view s, std::size_t n) noexcept;

// Smallest cut position >= n (and <= s.size()) that is not inside a UTF-8 sequence:
// s.substr(result) starts on a whole character.
std::size_t utf8_ceil(std::string_view s, std::size_t n) noexcept;

// Appends code point `cp` (at most U+10FFFF) encoded as UTF-8, 1 to 4 bytes. Whether a surrogate
// may be written is the caller's to decide.
void append_utf8(std::string& out, std::uint32_t cp);

}  // namespace handoff
